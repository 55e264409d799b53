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
	a := annotations{ann: ann, bad: bad}
	in := intent{prefix: "/", group: "default"}
	in.hosts = a.hosts()
	in.chain = a.interceptors()
	in.cors = a.cors()
	in.rateLimit = a.rateLimit()
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
	in.timeout = a.timeout(api.AnnotationL7Timeout, "30s")
	in.idleTimeout = a.timeout(api.AnnotationL7IdleTimeout, "10m")
	if v, ok := ann[api.AnnotationL7HTTP2]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(api.AnnotationL7HTTP2, fmt.Sprintf("%q is not a boolean; set \"true\" or \"false\"", v))
		}
		in.http2 = b
	}
	in.port = a.nonEmpty(api.AnnotationL7Port, "empty; name a port of the Service or remove the annotation for the first port")
	if v, ok := ann[api.AnnotationL7Delegate]; ok {
		in.delegations = parseDelegations(v, bad)
	}
	in.tlsSecret = a.nonEmpty(api.AnnotationL7TLSSecret, "empty; name a Secret of type kubernetes.io/tls in the Service's namespace")
	in.tlsPolicy = a.tlsPolicy(in.tlsSecret)
	in.health = parseHealth(ann, bad)
	in.responses = a.responses()
	in.edge = parseEdge(ann, bad)
	return in
}

// hosts reads tlb.io/l7-hosts: host names separated by commas.
func (a annotations) hosts() []string {
	v, ok := a.ann[api.AnnotationL7Hosts]
	if !ok {
		return nil
	}
	var hosts []string
	for _, h := range strings.Split(v, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			a.bad(api.AnnotationL7Hosts, fmt.Sprintf("%q has an empty host; list host names separated by commas, e.g. \"shop.example.com,*.shop.example.com\"", v))
			return nil
		}
		hosts = append(hosts, h)
	}
	return hosts
}

// interceptors reads tlb.io/l7-interceptors (api.InterceptorChain), which
// may name only what the operator declared.
func (a annotations) interceptors() chain.Chain {
	v, ok := a.ann[api.AnnotationL7Interceptors]
	if !ok {
		return nil
	}
	c, err := chain.Decode(v)
	if err == nil {
		err = chain.CheckDeclaredOnly(c)
	} else {
		err = fmt.Errorf("%w; want a JSON array such as [{\"type\":\"sessionInterceptor\"}]", err)
	}
	if err != nil {
		a.bad(api.AnnotationL7Interceptors, err.Error())
		return nil
	}
	return c
}

// timeout reads a timeout annotation: a positive duration, or "off"
// (-1).
func (a annotations) timeout(annotation, example string) time.Duration {
	v, ok := a.ann[annotation]
	if !ok {
		return 0
	}
	if strings.EqualFold(v, "off") {
		return -1
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		a.bad(annotation, fmt.Sprintf("want a positive duration such as %q or \"off\", got %q", example, v))
		return 0
	}
	return d
}

// nonEmpty reads an annotation that must not be empty; empty is reported
// with msg.
func (a annotations) nonEmpty(annotation, msg string) string {
	v, ok := a.ann[annotation]
	if ok && v == "" {
		a.bad(annotation, msg)
	}
	return v
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
