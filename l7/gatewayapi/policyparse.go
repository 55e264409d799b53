package gatewayapi

import (
	"encoding/json"
	"fmt"
	"strings"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/policy"
	"github.com/tlbproject/tlb/l7/ratelimit"
)

// functions are a TrafficPolicy's gateway functions in model form; nil
// fields are not set by the policy.
type functions struct {
	chain     chain.Chain
	jwt       *model.JWT
	auth      *model.RouteAuth
	cors      *model.CORSPolicy
	rateLimit *ratelimit.RouteLimits
}

// policyFunctions converts the spec of p with l7/policy. Key material is
// read from the Secrets of p's namespace. The message names the field
// that is wrong.
func (b *builder) policyFunctions(p *tlbv1alpha1.TrafficPolicy) (functions, string) {
	var fn functions
	s := p.Spec
	var err error
	if s.Interceptors != nil {
		raw, merr := json.Marshal(s.Interceptors)
		if merr != nil {
			return fn, "spec.interceptors: " + merr.Error()
		}
		if fn.chain, err = policy.Interceptors(string(raw)); err == nil {
			err = chain.CheckDeclaredOnly(fn.chain)
		}
		if err != nil {
			return fn, "spec.interceptors: " + err.Error()
		}
	}
	if fn.jwt, err = b.policyJWT(p); err != nil {
		return fn, specErr("spec.jwt", err)
	}
	fn.auth = policy.RouteAuth(s.Auth)
	if fn.cors, err = policy.CORS(s.CORS); err != nil {
		return fn, specErr("spec.cors", err)
	}
	if fn.rateLimit, err = policy.RateLimit(s.RateLimit); err != nil {
		return fn, specErr("spec.rateLimit", err)
	}
	return fn, ""
}

// policyJWT converts spec.jwt, reading an HMAC secret from p's
// namespace.
func (b *builder) policyJWT(p *tlbv1alpha1.TrafficPolicy) (*model.JWT, error) {
	j := p.Spec.JWT
	if j == nil {
		return nil, nil
	}
	m, err := policy.JWT(&j.JWT, "hmacSecretRef", j.HMACSecretRef != nil)
	if err != nil {
		return nil, err
	}
	m.JWKS = j.JWKS
	if ref := j.HMACSecretRef; ref != nil {
		sec := b.secrets[nn(p.Namespace, ref.Name)]
		if sec == nil || len(sec.Data[ref.Key]) == 0 {
			return nil, &policy.FieldError{Field: "hmacSecretRef", Msg: fmt.Sprintf("no key %q in Secret %s/%s", ref.Key, p.Namespace, ref.Name)}
		}
		m.HMAC = model.NewPrivateKey([]byte(strings.TrimRight(string(sec.Data[ref.Key]), "\r\n")))
	}
	return m, nil
}

// specErr is the first field error of err under path: a TrafficPolicy's
// condition names one.
func specErr(path string, err error) string {
	fe := policy.Fields(err)[0]
	return (&policy.FieldError{Field: policy.Path(path, fe.Field), Msg: fe.Msg}).Error()
}

// applyService sets fn on a whole service: the service-wide settings and
// each route's interceptors and auth.
func (fn functions) applyService(s *model.Service) {
	if fn.jwt != nil {
		s.JWT = fn.jwt
	}
	if fn.cors != nil {
		s.CORS = fn.cors
	}
	if fn.rateLimit != nil {
		s.RateLimit = fn.rateLimit
	}
	for i := range s.Routes {
		fn.applyRoute(&s.Routes[i], false)
	}
}

// applyRoute sets fn on one route; own says whether cors and rate limits
// go on the route itself (a rule target) rather than its service.
func (fn functions) applyRoute(r *model.Route, own bool) {
	if fn.chain != nil {
		r.Interceptors = fn.chain
	}
	if fn.auth != nil {
		r.Auth = fn.auth
	}
	if own && fn.cors != nil {
		r.CORS = fn.cors
	}
	if own && fn.rateLimit != nil {
		r.RateLimit = fn.rateLimit
	}
}
