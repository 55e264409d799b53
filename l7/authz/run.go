package authz

import (
	"context"
	"fmt"

	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// outcome is what running a chain decided.
type outcome struct {
	// deny is the response for the client when an interceptor refused.
	deny *intercept.Response
	// failed is the error of an interceptor that failed closed.
	failed error
	// upstream, remove and downstream are the changes of an allowed
	// request.
	upstream   []intercept.Header
	remove     []string
	downstream []intercept.Header
}

// run runs the steps in order on r. Each step sees r with the headers the
// steps before it set or removed.
func (s *Service) run(ctx context.Context, steps []step, r *intercept.Request) outcome {
	var out outcome
	copied := false
	for _, st := range steps {
		sctx, cancel := context.WithTimeout(ctx, st.timeout)
		start := s.deps.Now()
		v, err := st.run.Intercept(sctx, r)
		cancel()
		st.metrics.latency.Observe(s.deps.Now().Sub(start).Seconds())
		switch {
		case err != nil:
			st.metrics.err.Inc()
			if !st.failOpen {
				return outcome{failed: fmt.Errorf("%s: %w", st.name, err)}
			}
			v = intercept.Verdict{} // skipped, but for what it must still change
			if fo, ok := st.run.(intercept.FailOpener); ok {
				v = fo.FailOpen()
			}
		case v.Deny != nil:
			st.metrics.deny.Inc()
			return outcome{deny: withHeaders(v.Deny, out.downstream)}
		default:
			st.metrics.allow.Inc()
		}
		if v.Session != nil {
			r.Session = v.Session
		}
		if len(v.Upstream) > 0 || len(v.Remove) > 0 {
			if !copied {
				r.Headers = clone(r.Headers)
				copied = true
			}
			for _, h := range v.Upstream {
				r.Headers[h.Name] = h.Value
				out.remove = without(out.remove, h.Name)
				out.upstream = set(out.upstream, h)
			}
			for _, name := range v.Remove {
				delete(r.Headers, name)
				out.upstream = unset(out.upstream, name)
				if !contains(out.remove, name) {
					out.remove = append(out.remove, name)
				}
			}
		}
		for _, h := range v.Downstream {
			out.downstream = set(out.downstream, h)
		}
	}
	return out
}

// withHeaders adds to a refusal the response headers earlier interceptors
// set (a CSP policy applies to an error page too), unless it sets them.
func withHeaders(resp *intercept.Response, hs []intercept.Header) *intercept.Response {
	if len(hs) == 0 {
		return resp
	}
	r := *resp
	r.Headers = append([]intercept.Header(nil), resp.Headers...)
	for _, h := range hs {
		if !hasHeader(r.Headers, h.Name) {
			r.Headers = append(r.Headers, h)
		}
	}
	return &r
}

func clone(m map[string]string) map[string]string {
	c := make(map[string]string, len(m)+4)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// set replaces or appends h, keeping first-set order.
func set(hs []intercept.Header, h intercept.Header) []intercept.Header {
	for i := range hs {
		if hs[i].Name == h.Name {
			hs[i].Value = h.Value
			return hs
		}
	}
	return append(hs, h)
}

func unset(hs []intercept.Header, name string) []intercept.Header {
	for i := range hs {
		if hs[i].Name == name {
			return append(hs[:i], hs[i+1:]...)
		}
	}
	return hs
}

func hasHeader(hs []intercept.Header, name string) bool {
	for _, h := range hs {
		if h.Name == name {
			return true
		}
	}
	return false
}

func without(ss []string, s string) []string {
	for i := range ss {
		if ss[i] == s {
			return append(ss[:i], ss[i+1:]...)
		}
	}
	return ss
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
