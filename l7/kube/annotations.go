package kube

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/ratelimit"
)

// The Service annotations the L7 source reads. Each maps to the model
// field that the same key of a DSL gateway/service/v1 file fills.
const (
	// AnnotationL7 opts a Service into L7 ("true"); shared with ipam.
	AnnotationL7 = "tlb.io/l7"
	// AnnotationHosts is a comma-separated list of host names (DSL hosts);
	// unset serves "*".
	AnnotationHosts = "tlb.io/l7-hosts"
	// AnnotationPathPrefix is the route's path prefix (DSL routes[0].prefix);
	// default "/".
	AnnotationPathPrefix = "tlb.io/l7-path-prefix"
	// AnnotationGroup is the gateway group (DSL group); default "default".
	AnnotationGroup = "tlb.io/l7-group"
	// AnnotationTimeout is the request timeout (DSL timeout), e.g. "30s",
	// or "off" for long streams (SSE, gRPC streaming).
	AnnotationTimeout = "tlb.io/l7-timeout"
	// AnnotationIdleTimeout is the stream idle timeout (DSL idleTimeout),
	// e.g. "10m" or "off".
	AnnotationIdleTimeout = "tlb.io/l7-idle-timeout"
	// AnnotationHTTP2 makes the gateway speak HTTP/2 to the endpoints (DSL
	// upstreams[0].http2), for gRPC backends.
	AnnotationHTTP2 = "tlb.io/l7-http2"
	// AnnotationPort names the Service port (by name or number) that the
	// route sends to; default the first port of the Service.
	AnnotationPort = "tlb.io/l7-port"
	// AnnotationTLSSecret names a Secret of type kubernetes.io/tls in the
	// Service's namespace. With it the gateway listener on the Service's
	// VIP is HTTPS, chosen by SNI for the hosts of tlb.io/l7-hosts.
	AnnotationTLSSecret = "tlb.io/l7-tls-secret"
	// AnnotationDelegate opens paths of this Service's hosts to Services of
	// other namespaces: comma-separated prefix=namespace pairs (DSL
	// delegations), e.g. "/api=team-b,/api=team-c,/docs=*".
	AnnotationDelegate = "tlb.io/l7-delegate"
	// AnnotationHealthCheck turns on an active health check of the
	// endpoints (DSL upstreams[0].healthCheck): "http:/path", "tcp",
	// "grpc" or "grpc:service.Name".
	AnnotationHealthCheck = "tlb.io/l7-health-check"
	// AnnotationHealthCheckInterval is the interval of that check (DSL
	// healthCheck.interval), e.g. "10s".
	AnnotationHealthCheckInterval = "tlb.io/l7-health-check-interval"
	// AnnotationOutlierDetection "false" turns passive ejection off (DSL
	// outlierDetection.disabled).
	AnnotationOutlierDetection = "tlb.io/l7-outlier-detection"
	// AnnotationMaxConnections, AnnotationMaxPendingRequests and
	// AnnotationMaxRequests are circuit-breaker limits per gateway (DSL
	// circuitBreakers.*), positive integers.
	AnnotationMaxConnections     = "tlb.io/l7-max-connections"
	AnnotationMaxPendingRequests = "tlb.io/l7-max-pending-requests"
	AnnotationMaxRequests        = "tlb.io/l7-max-requests"
	// AnnotationSlowStart is the slow-start window of new endpoints (DSL
	// slowStart), e.g. "30s", or "off".
	AnnotationSlowStart = "tlb.io/l7-slow-start"
	// AnnotationInterceptors is the route's interceptors (DSL
	// routes[0].interceptors) as the JSON array the authorization service
	// reads, e.g. `[{"type":"sessionInterceptor"},{"type":"csrfInterceptor"}]`,
	// checked as strictly as the DSL. External interceptors and htpasswd
	// files are named only by what the operator declared
	// (`{"type":"external","id":"x","endpoint":"audit"}`,
	// `{"type":"basicAuth","users":"ops"}`), never by address, URL or path.
	AnnotationInterceptors = "tlb.io/l7-interceptors"
	// AnnotationCORS is the service's cross-origin policy (DSL cors) as
	// JSON with the DSL's keys, e.g. `{"allowOrigins":["https://app.example.com"],
	// "allowMethods":["GET"],"allowCredentials":true,"maxAge":"10m"}`.
	AnnotationCORS = "tlb.io/l7-cors"
	// AnnotationRateLimit is the service's rate limits (DSL rateLimit) as
	// JSON with the DSL's keys, e.g. `{"local":{"requestsPerSecond":10,"burst":20}}`.
	AnnotationRateLimit = "tlb.io/l7-rate-limit"
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
	v, ok := ann[AnnotationL7]
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
	if v, ok := ann[AnnotationHosts]; ok {
		for _, h := range strings.Split(v, ",") {
			h = strings.TrimSpace(h)
			if h == "" {
				bad(AnnotationHosts, fmt.Sprintf("%q has an empty host; list host names separated by commas, e.g. \"shop.example.com,*.shop.example.com\"", v))
				in.hosts = nil
				break
			}
			in.hosts = append(in.hosts, h)
		}
	}
	if v, ok := ann[AnnotationInterceptors]; ok {
		c, err := chain.Decode(v)
		switch {
		case err != nil:
			bad(AnnotationInterceptors, err.Error()+`; want a JSON array such as [{"type":"sessionInterceptor"}]`)
		case chain.CheckDeclaredOnly(c) != nil:
			bad(AnnotationInterceptors, chain.CheckDeclaredOnly(c).Error())
		default:
			in.chain = c
		}
	}
	if v, ok := ann[AnnotationCORS]; ok {
		c, err := parseCORS(v)
		if err != nil {
			bad(AnnotationCORS, err.Error())
		} else {
			in.cors = c
		}
	}
	if v, ok := ann[AnnotationRateLimit]; ok {
		l, err := parseRateLimit(v)
		if err != nil {
			bad(AnnotationRateLimit, err.Error())
		} else {
			in.rateLimit = l
		}
	}
	if v, ok := ann[AnnotationPathPrefix]; ok {
		if !strings.HasPrefix(v, "/") {
			bad(AnnotationPathPrefix, fmt.Sprintf("%q must start with /", v))
		} else {
			in.prefix = v
		}
	}
	if v, ok := ann[AnnotationGroup]; ok {
		if v == "" {
			bad(AnnotationGroup, "empty; name a gateway group or remove the annotation for \"default\"")
		} else {
			in.group = v
		}
	}
	if v, ok := ann[AnnotationTimeout]; ok {
		d, err := time.ParseDuration(v)
		if strings.EqualFold(v, "off") {
			in.timeout = -1
		} else if err != nil || d <= 0 {
			bad(AnnotationTimeout, fmt.Sprintf("want a positive duration such as \"30s\" or \"off\", got %q", v))
		} else {
			in.timeout = d
		}
	}
	if v, ok := ann[AnnotationIdleTimeout]; ok {
		if strings.EqualFold(v, "off") {
			in.idleTimeout = -1
		} else if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			bad(AnnotationIdleTimeout, fmt.Sprintf("want a positive duration such as \"10m\" or \"off\", got %q", v))
		} else {
			in.idleTimeout = d
		}
	}
	if v, ok := ann[AnnotationHTTP2]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(AnnotationHTTP2, fmt.Sprintf("%q is not a boolean; set \"true\" or \"false\"", v))
		}
		in.http2 = b
	}
	if v, ok := ann[AnnotationPort]; ok {
		if v == "" {
			bad(AnnotationPort, "empty; name a port of the Service or remove the annotation for the first port")
		}
		in.port = v
	}
	if v, ok := ann[AnnotationDelegate]; ok {
		in.delegations = parseDelegations(v, bad)
	}
	if v, ok := ann[AnnotationTLSSecret]; ok {
		if v == "" {
			bad(AnnotationTLSSecret, "empty; name a Secret of type kubernetes.io/tls in the Service's namespace")
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
			bad(AnnotationDelegate, fmt.Sprintf("entry %q: want prefix=namespace, e.g. \"/api=team-b\"", strings.TrimSpace(e)))
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
