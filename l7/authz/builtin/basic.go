package builtin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// Users gives the bcrypt hashes of an htpasswd file by user name. An error
// means the file could not be read or holds a line that is not a bcrypt
// hash: the interceptor cannot decide.
type Users interface {
	Users(path string) (map[string][]byte, error)
}

// verifiedTTL is how long a verified user/password pair is remembered, so
// bcrypt (tens of milliseconds by design) runs once per client and minute,
// not per request. A changed file forgets every pair.
const verifiedTTL = time.Minute

// maxVerified bounds the remembered pairs.
const maxVerified = 10000

// BasicAuth is basicAuth: HTTP Basic credentials checked against bcrypt
// hashes. Allowed requests reach the upstream without the Authorization
// header.
type BasicAuth struct {
	path      string
	challenge intercept.Header
	users     Users
	bcrypt    *Bcrypt
	now       func() time.Time

	mu       sync.Mutex
	key      []byte // HMAC key of the remembered pairs: random per process
	hashes   map[string][]byte
	cost     int // the file's typical bcrypt cost, spent on unknown users
	verified map[[32]byte]time.Time
}

// NewBasicAuth builds basicAuth from its decoded settings; its bcrypt
// comparisons run in b.
func NewBasicAuth(cfg chain.Interceptor, users Users, b *Bcrypt, now func() time.Time) *BasicAuth {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &BasicAuth{path: cfg.UsersFile, users: users, bcrypt: b, now: now, key: key,
		challenge: intercept.Header{Name: "www-authenticate", Value: `Basic realm="` + cfg.Realm + `", charset="UTF-8"`}}
}

// Intercept checks the credentials. When bcrypt is too busy to check them
// before the interceptor's timeout, the client gets 429 with Retry-After.
func (b *BasicAuth) Intercept(ctx context.Context, r *intercept.Request) (intercept.Verdict, error) {
	hashes, err := b.users.Users(b.path)
	if err != nil {
		return intercept.Verdict{}, err
	}
	user, pass, ok := basicCredentials(r.Headers["authorization"])
	if !ok {
		return intercept.Refuse(http.StatusUnauthorized, "unauthorized\n", b.challenge), nil
	}
	valid, err := b.valid(ctx, hashes, user, pass)
	switch {
	case errors.Is(err, ErrBcryptBusy):
		return intercept.Refuse(http.StatusTooManyRequests, "too many credential checks in progress; retry later\n",
			intercept.Header{Name: "retry-after", Value: "1"}), nil
	case err != nil:
		return intercept.Verdict{}, err
	case !valid:
		return intercept.Refuse(http.StatusUnauthorized, "unauthorized\n", b.challenge), nil
	}
	return intercept.Verdict{Remove: []string{"authorization"}}, nil
}

func (b *BasicAuth) valid(ctx context.Context, hashes map[string][]byte, user, pass string) (bool, error) {
	h, known := hashes[user]
	mac := hmac.New(sha256.New, b.key)
	mac.Write([]byte(user))
	mac.Write([]byte{0})
	mac.Write([]byte(pass))
	var id [32]byte
	copy(id[:], mac.Sum(nil))
	now := b.now()
	b.mu.Lock()
	if !sameHashes(b.hashes, hashes) {
		b.hashes, b.verified, b.cost = hashes, map[[32]byte]time.Time{}, typicalCost(hashes)
	}
	until, seen := b.verified[id]
	cost := b.cost
	b.mu.Unlock()
	if seen && now.Before(until) && known {
		return true, nil
	}
	if !known {
		// Spend what a known user's check spends (the file's cost), so
		// the answer's delay does not tell which users exist.
		return false, b.bcrypt.CompareUnknown(ctx, cost, []byte(pass))
	}
	ok, err := b.bcrypt.Compare(ctx, h, []byte(pass))
	if err != nil || !ok {
		return false, err
	}
	b.mu.Lock()
	if len(b.verified) >= maxVerified {
		clear(b.verified)
	}
	b.verified[id] = now.Add(verifiedTTL)
	b.mu.Unlock()
	return true, nil
}

// sameHashes reports whether two loads are the same map: the loader
// returns the same map until the file changes.
func sameHashes(a, b map[string][]byte) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// basicCredentials decodes "Basic base64(user:password)".
func basicCredentials(h string) (user, pass string, ok bool) {
	scheme, v, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "basic") {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil {
		return "", "", false
	}
	user, pass, ok = strings.Cut(string(raw), ":")
	return user, pass, ok && user != ""
}
