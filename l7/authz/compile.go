package authz

import (
	"fmt"
	"sync"
	"time"

	"github.com/tlbproject/tlb/l7/authz/builtin"
	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/external"
	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// maxChains bounds the cache of compiled chains. Values come from the
// routes' configuration, so there are as many as distinct chains; the bound
// only guards memory if configurations churn.
const maxChains = 4096

// step is one compiled interceptor of a chain.
type step struct {
	name     string
	timeout  time.Duration
	failOpen bool
	run      intercept.Interceptor
	metrics  stepMetrics
}

// compiled is a decoded chain ready to run, or why it cannot be.
type compiled struct {
	steps []step
	err   error
}

// compile decodes a context extension value and builds its interceptors.
func (s *Service) compile(value string) *compiled {
	c, err := chain.Decode(value)
	if err != nil {
		s.deps.Log.Warn("authz: bad interceptor chain on a route", "error", err, "value", value)
		return &compiled{err: err}
	}
	if err := s.undeclared(c); err != nil {
		s.deps.Log.Warn("authz: a route's chain names what the operator did not declare", "error", err)
		return &compiled{err: err}
	}
	out := &compiled{steps: make([]step, 0, len(c))}
	for i, in := range c {
		run, err := s.build(in)
		if err != nil {
			err = fmt.Errorf("interceptors[%d].%w", i, err)
			s.deps.Log.Warn("authz: bad interceptor chain on a route", "error", err, "value", value)
			return &compiled{err: err}
		}
		out.steps = append(out.steps, step{name: in.Name(), timeout: time.Duration(in.Timeout),
			failOpen: in.FailOpen, run: run, metrics: s.metrics.step(in.Name())})
	}
	return out
}

func (s *Service) build(in chain.Interceptor) (intercept.Interceptor, error) {
	switch in.Type {
	case chain.TypeSession:
		return builtin.NewSession(in, s.deps.Sessions), nil
	case chain.TypeCSRF:
		return builtin.NewCSRF(in), nil
	case chain.TypeCSP:
		return builtin.NewCSP(in), nil
	case chain.TypeBasicAuth:
		if in.Users != "" {
			return nil, fmt.Errorf("users: %q was not resolved to a declared file (l7 resolves names before serving a route)", in.Users)
		}
		return builtin.NewBasicAuth(in, s.deps.Users, s.deps.Bcrypt, s.deps.Now), nil
	case chain.TypeExternal:
		if in.Endpoint != "" {
			return nil, fmt.Errorf("endpoint: %q was not resolved to a declared endpoint (l7 resolves names before serving a route)", in.Endpoint)
		}
		if in.Transport == chain.TransportREST {
			return external.NewREST(in, s.deps.HTTP)
		}
		return external.NewGRPC(in, s.conns)
	}
	return nil, fmt.Errorf("type: unknown interceptor type %q", in.Type)
}

// cache maps context extension values to compiled chains.
type cache struct {
	mu      sync.RWMutex
	m       map[string]*compiled
	gen     uint64 // counts resets: a chain compiled before one is not kept
	max     int
	compile func(string) *compiled
}

func newCache(max int, compile func(string) *compiled) *cache {
	return &cache{m: map[string]*compiled{}, max: max, compile: compile}
}

// reset forgets every compiled chain.
func (c *cache) reset() {
	c.mu.Lock()
	clear(c.m)
	c.gen++
	c.mu.Unlock()
}

func (c *cache) get(value string) *compiled {
	c.mu.RLock()
	got, ok := c.m[value]
	gen := c.gen
	c.mu.RUnlock()
	if ok {
		return got
	}
	got = c.compile(value)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return got // compiled against what a reset replaced: use once, never keep
	}
	if len(c.m) >= c.max {
		clear(c.m) // rare: start over rather than track recency
	}
	c.m[value] = got
	return got
}
