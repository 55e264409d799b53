package authz

import (
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/l7/authz/builtin"
	"github.com/tlbproject/tlb/l7/authz/external"
)

// Deps are what the service uses to reach the outside world.
type Deps struct {
	// Sessions is the session store of sessionInterceptor (required).
	Sessions builtin.SessionStore
	// HTTP sends the requests of REST interceptors (required).
	HTTP external.Doer
	// Dial opens connections to gRPC interceptors (required).
	Dial external.Dialer
	// Users reads the htpasswd files of basicAuth; nil reads them from
	// disk (builtin.HtpasswdFiles, rechecked every second).
	Users builtin.Users
	// Bcrypt runs the comparisons of basicAuth; nil: one at a time per
	// two cores (at least one), DefaultBcryptQueue waiting.
	Bcrypt *builtin.Bcrypt
	// Log receives configuration errors.
	Log *slog.Logger
	// Now is the clock that times interceptors.
	Now func() time.Time
	// Registerer receives the metrics; nil registers none.
	Registerer prometheus.Registerer
}

// DefaultBcryptQueue is how many basicAuth checks may wait for a bcrypt
// slot (each until its timeout) before more are refused at once (429).
const DefaultBcryptQueue = 64

// Service is the authorization service.
type Service struct {
	deps    Deps
	conns   *external.Conns
	metrics *metrics
	chains  *cache

	declMu   sync.Mutex
	declared *Declared // nil until the first Declare: nothing is
}

// New returns the service.
func New(d Deps) (*Service, error) {
	if d.Sessions == nil || d.HTTP == nil || d.Dial == nil {
		return nil, errors.New("authz: Sessions, HTTP and Dial are required")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Bcrypt == nil {
		d.Bcrypt = builtin.NewBcrypt(runtime.GOMAXPROCS(0)/2, DefaultBcryptQueue)
	}
	if d.Users == nil {
		d.Users = &builtin.HtpasswdFiles{Recheck: time.Second, Now: d.Now}
	}
	m, err := newMetrics(d.Registerer)
	if err != nil {
		return nil, err
	}
	s := &Service{deps: d, conns: external.NewConns(d.Dial), metrics: m}
	s.chains = newCache(maxChains, s.compile)
	return s, nil
}
