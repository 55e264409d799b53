package kube

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/ratelimit"
)

// intent is what a Service's annotations ask for, parsed and checked.
type intent struct {
	hosts       []string
	prefix      string
	group       string
	timeout     time.Duration
	idleTimeout time.Duration
	http2       bool
	port        string
	tlsSecret   string
	delegations []model.Delegation
	health      upstreamHealth
	chain       chain.Chain
	cors        *model.CORSPolicy
	rateLimit   *ratelimit.RouteLimits
	responses   responseIntent
	edge        edgeIntent
	tlsPolicy   *model.TLSPolicy
}

// optedIn reports whether the annotations opt into L7, and a problem when
// tlb.io/l7 is set but is not a boolean.
func optedIn(ann map[string]string) (bool, string) {
	v, ok := ann[api.AnnotationL7]
	if !ok {
		return false, ""
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Sprintf("%q is not a boolean; set \"true\" or \"false\"", v)
	}
	return b, ""
}

// parseIntent reads the L7 annotations. bad is called once per invalid
// annotation with a message saying what to set.
func parseIntent(ann map[string]string, bad func(annotation, msg string)) intent {
	in := intent{prefix: "/", group: "default"}
	if v, ok := ann[api.AnnotationL7Hosts]; ok {
		for _, h := range strings.Split(v, ",") {
			h = strings.TrimSpace(h)
			if h == "" {
				bad(api.AnnotationL7Hosts, fmt.Sprintf("%q has an empty host; list host names separated by commas, e.g. \"shop.example.com,*.shop.example.com\"", v))
				in.hosts = nil
				break
			}
			in.hosts = append(in.hosts, h)
		}
	}
	if v, ok := ann[api.AnnotationL7Interceptors]; ok {
		c, err := chain.Decode(v)
		switch {
		case err != nil:
			bad(api.AnnotationL7Interceptors, err.Error()+`; want a JSON array such as [{"type":"sessionInterceptor"}]`)
		case chain.CheckDeclaredOnly(c) != nil:
			bad(api.AnnotationL7Interceptors, chain.CheckDeclaredOnly(c).Error())
		default:
			in.chain = c
		}
	}
	if v, ok := ann[api.AnnotationL7CORS]; ok {
		c, err := parseCORS(v)
		if err != nil {
			bad(api.AnnotationL7CORS, err.Error())
		} else {
			in.cors = c
		}
	}
	if v, ok := ann[api.AnnotationL7RateLimit]; ok {
		l, err := parseRateLimit(v)
		if err != nil {
			bad(api.AnnotationL7RateLimit, err.Error())
		} else {
			in.rateLimit = l
		}
	}
	if v, ok := ann[api.AnnotationL7PathPrefix]; ok {
		if !strings.HasPrefix(v, "/") {
			bad(api.AnnotationL7PathPrefix, fmt.Sprintf("%q must start with /", v))
		} else {
			in.prefix = v
		}
	}
	if v, ok := ann[api.AnnotationL7Group]; ok {
		if v == "" {
			bad(api.AnnotationL7Group, "empty; name a gateway group or remove the annotation for \"default\"")
		} else {
			in.group = v
		}
	}
	if v, ok := ann[api.AnnotationL7Timeout]; ok {
		d, err := time.ParseDuration(v)
		if strings.EqualFold(v, "off") {
			in.timeout = -1
		} else if err != nil || d <= 0 {
			bad(api.AnnotationL7Timeout, fmt.Sprintf("want a positive duration such as \"30s\" or \"off\", got %q", v))
		} else {
			in.timeout = d
		}
	}
	if v, ok := ann[api.AnnotationL7IdleTimeout]; ok {
		if strings.EqualFold(v, "off") {
			in.idleTimeout = -1
		} else if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			bad(api.AnnotationL7IdleTimeout, fmt.Sprintf("want a positive duration such as \"10m\" or \"off\", got %q", v))
		} else {
			in.idleTimeout = d
		}
	}
	if v, ok := ann[api.AnnotationL7HTTP2]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(api.AnnotationL7HTTP2, fmt.Sprintf("%q is not a boolean; set \"true\" or \"false\"", v))
		}
		in.http2 = b
	}
	if v, ok := ann[api.AnnotationL7Port]; ok {
		if v == "" {
			bad(api.AnnotationL7Port, "empty; name a port of the Service or remove the annotation for the first port")
		}
		in.port = v
	}
	if v, ok := ann[api.AnnotationL7Delegate]; ok {
		in.delegations = parseDelegations(v, bad)
	}
	if v, ok := ann[api.AnnotationL7TLSSecret]; ok {
		if v == "" {
			bad(api.AnnotationL7TLSSecret, "empty; name a Secret of type kubernetes.io/tls in the Service's namespace")
		}
		in.tlsSecret = v
	}
	in.tlsPolicy = parseTLSPolicy(ann, in.tlsSecret, bad)
	in.health = parseHealth(ann, bad)
	in.responses = parseResponses(ann, bad)
	in.edge = parseEdge(ann, bad)
	return in
}

// parseDelegations reads "prefix=namespace,..." into delegations, one per
// prefix in order of first appearance.
func parseDelegations(v string, bad func(annotation, msg string)) []model.Delegation {
	var out []model.Delegation
	idx := map[string]int{}
	for _, e := range strings.Split(v, ",") {
		prefix, ns, ok := strings.Cut(strings.TrimSpace(e), "=")
		if !ok || !strings.HasPrefix(prefix, "/") || ns == "" {
			bad(api.AnnotationL7Delegate, fmt.Sprintf("entry %q: want prefix=namespace, e.g. \"/api=team-b\"", strings.TrimSpace(e)))
			return nil
		}
		i, seen := idx[prefix]
		if !seen {
			i = len(out)
			idx[prefix] = i
			out = append(out, model.Delegation{Prefix: prefix})
		}
		out[i].Namespaces = append(out[i].Namespaces, ns)
	}
	return out
}
