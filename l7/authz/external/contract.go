package external

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/external/interceptorpb"
	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// call is what both transports share: the interceptor's settings and the
// mapping of a request and a reply.
type call struct {
	id         string
	pattern    *regexp.Regexp // nil: no path parameters
	parameters map[string]string
}

func newCall(cfg chain.Interceptor) (call, error) {
	c := call{id: cfg.ID, parameters: cfg.Parameters}
	if cfg.PathPattern != "" {
		re, err := regexp.Compile(cfg.PathPattern)
		if err != nil {
			return c, fmt.Errorf("pathPattern: %w", err)
		}
		c.pattern = re
	}
	return c, nil
}

// request maps a request to the contract's InterceptRequest.
func (c call) request(r *intercept.Request) *interceptorpb.InterceptRequest {
	out := &interceptorpb.InterceptRequest{
		Id: c.id, Method: r.Method, Path: r.Path, Host: r.Host,
		Headers: r.Headers, Parameters: c.parameters,
	}
	for q := r.RawQuery; q != ""; {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		out.Query = append(out.Query, &interceptorpb.Param{Name: k, Value: v})
	}
	if c.pattern != nil {
		if m := c.pattern.FindStringSubmatch(r.Path); m != nil {
			out.PathParams = map[string]string{}
			for i, name := range c.pattern.SubexpNames() {
				if i > 0 && name != "" {
					out.PathParams[name] = m[i]
				}
			}
		}
	}
	return out
}

// verdict maps the interceptor's reply to a verdict, rejecting a reply
// that is neither allow nor respond or that names invalid headers.
func verdict(resp *interceptorpb.InterceptResponse) (intercept.Verdict, error) {
	switch d := resp.GetDecision().(type) {
	case *interceptorpb.InterceptResponse_Allow:
		up, err := headers(d.Allow.GetUpstreamHeaders())
		if err == nil {
			err = upstreamAllowed(up)
		}
		if err != nil {
			return intercept.Verdict{}, fmt.Errorf("allow.upstream_headers: %w", err)
		}
		down, err := headers(d.Allow.GetDownstreamHeaders())
		if err != nil {
			return intercept.Verdict{}, fmt.Errorf("allow.downstream_headers: %w", err)
		}
		return intercept.Verdict{Upstream: up, Downstream: down}, nil
	case *interceptorpb.InterceptResponse_Respond:
		st := d.Respond.GetStatus()
		if st < 200 || st > 599 {
			return intercept.Verdict{}, fmt.Errorf("respond.status: %d is not 200-599", st)
		}
		hs, err := headers(d.Respond.GetHeaders())
		if err != nil {
			return intercept.Verdict{}, fmt.Errorf("respond.headers: %w", err)
		}
		return intercept.Verdict{Deny: &intercept.Response{Status: int(st), Headers: hs, Body: d.Respond.GetBody()}}, nil
	}
	return intercept.Verdict{}, errors.New("reply has neither allow nor respond")
}

// upstreamAllowed refuses headers an interceptor may not set upstream
// (host, hop-by-hop and framing headers, pseudo-headers, x-envoy-*).
func upstreamAllowed(hs []intercept.Header) error {
	for _, h := range hs {
		if why := chain.UpstreamHeaderProblem(h.Name); why != "" {
			return fmt.Errorf("%s %s", h.Name, why)
		}
	}
	return nil
}

// headers turns a header map into sorted headers with lower-case names.
func headers(m map[string]string) ([]intercept.Header, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make([]intercept.Header, 0, len(m))
	for k, v := range m {
		if !chain.IsToken(k) {
			return nil, fmt.Errorf("%q is not a header name", k)
		}
		if !intercept.ValidHeaderValue(v) {
			return nil, fmt.Errorf("header %s: value has a line break, NUL or another control character", k)
		}
		out = append(out, intercept.Header{Name: strings.ToLower(k), Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
