package model

import (
	"net/netip"
	"time"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/ratelimit"
)

// Operator is the namespace of objects the operator declares (the DSL
// files): they own every host they claim and may use the catch-all "*".
const Operator = ""

// Protocol is what a gateway listener speaks on its external port.
type Protocol string

// The protocols a gateway listener can speak.
const (
	HTTP  Protocol = "HTTP"
	HTTPS Protocol = "HTTPS"
	TCP   Protocol = "TCP"
)

// Default timeouts of a route, as in the seed gateway: 1m per request and
// 10m idle per stream.
const (
	DefaultTimeout     = time.Minute
	DefaultIdleTimeout = 10 * time.Minute
)

// Config is the whole desired state of the L7 tier, from one or more sources.
type Config struct {
	Gateways     []Gateway
	Services     []Service
	Certificates []Certificate
	// Interceptors are the operator's declarations of the interceptor
	// endpoints and htpasswd files that tenants' chains may name (only
	// the DSL source sets them).
	Interceptors []InterceptorCatalog
}

// Origin says where an object came from (a file name, a Kubernetes
// namespace/name), so that problems name it.
type Origin string

// Gateway is a named set of listeners served by the Envoy gateways of one
// group (shard).
type Gateway struct {
	Name   string
	Group  string
	Origin Origin
	// Created orders claims (VIP:port) between gateways: the earliest wins.
	// Zero for DSL files, which therefore come first.
	Created time.Time
	// FirstLoad orders claims after Created: among DSL files, the load of
	// the directory at which the file first appeared (0 for the first
	// load), so a file added later never takes what an older one serves.
	FirstLoad uint64
	Listeners []Listener
	// Tracing, when set, exports spans of this gateway's listeners to an
	// OpenTelemetry collector (see tracing.go).
	Tracing *Tracing
}

// GatewayID identifies one declaration of a gateway: its name and where
// it came from. Two declarations of one name (a rejected duplicate, say)
// have different IDs.
type GatewayID struct {
	Name   string
	Origin Origin
}

// ID returns the identity of this declaration of the gateway.
func (g Gateway) ID() GatewayID { return GatewayID{Name: g.Name, Origin: g.Origin} }

// Listener is one external VIP:port of a gateway.
type Listener struct {
	Name     string
	VIP      netip.Addr
	Port     uint32
	Protocol Protocol
	// TLS lists the certificates served by SNI name (HTTPS only).
	TLS []SNICertificate
	// Target is the cluster a TCP listener forwards to ("service/upstream").
	Target string
	// Forward are the weighted clusters of a TCP or UDP listener that
	// forwards to several (Gateway API TCPRoute, UDPRoute; see forward.go).
	Forward []WeightedCluster
	// RedirectHTTPS makes an HTTP listener answer every request with a
	// redirect to https:// on the same host (HTTP only; it serves no routes).
	RedirectHTTPS bool
	// TLSPolicy overrides the TLS versions and cipher suites (HTTPS only;
	// nil for the defaults, see tlspolicy.go).
	TLSPolicy *TLSPolicy
	// ClientCertificate, when set, verifies client certificates (HTTPS only).
	ClientCertificate *ClientCertificate
	// Passthrough forwards TLS connections by SNI name without
	// terminating them (TLS only; Gateway API TLSRoute).
	Passthrough []SNITarget
	// XFFTrustedHops is how many proxies in front of the gateway append
	// to X-Forwarded-For (HTTP and HTTPS): the client address that local
	// and global limits, the access log and upstreams see is the address
	// that many hops from the right of X-Forwarded-For (after the peer's,
	// which Envoy appends). 0, the default, believes no header: the peer
	// address is the client, and a client cannot choose its own address.
	// Set it only when every connection comes through those proxies.
	XFFTrustedHops uint32
	// Default also serves the operator's services of the group that
	// name no listener (HTTP and HTTPS only): seed 000's services,
	// written for a gateway with one entry point, name none.
	Default bool
}

// MaxXFFTrustedHops bounds Listener.XFFTrustedHops.
const MaxXFFTrustedHops = 5

// ListenerRef names a listener of a gateway that a service is served on.
type ListenerRef struct {
	Gateway  string
	Listener string
}

// String returns "gateway/listener".
func (r ListenerRef) String() string { return r.Gateway + "/" + r.Listener }

// Delegation lets services of other namespaces serve paths under Prefix of
// the delegating service's hosts.
type Delegation struct {
	Prefix string
	// Namespaces may serve routes under Prefix; "*" is any namespace.
	Namespaces []string
}

// SNICertificate binds server names to a certificate by name.
type SNICertificate struct {
	ServerNames []string
	Certificate string
	// Listener and Hostname name the Gateway API listener whose chain
	// this is and that listener's hostname ("" for any). When the chains
	// of one port serve more than one listener, a chain answers 421
	// Misdirected Request to a Host that another listener of the port
	// serves (translate, misdirected.go). Both are empty for the DSL's
	// gateways.
	Listener string
	Hostname string
}

// Certificate is a TLS certificate chain and its private key, held in memory.
type Certificate struct {
	Name string
	// Gateway is the gateway declaration that carries the certificate. A
	// listener is served only a certificate its own gateway declared: the
	// name never decides who gets a key (Resolve).
	Gateway GatewayID
	Origin  Origin
	Chain   []byte
	Key     PrivateKey
}

// Service is a routed application: its host names, its routes and the
// upstreams those routes send traffic to.
type Service struct {
	Name   string
	Group  string
	Origin Origin
	// Namespace is the owner of the object: a Kubernetes namespace, or
	// Operator for the DSL. Hosts are owned per namespace.
	Namespace string
	// Created orders claims on hosts and routes: the earliest wins, then
	// FirstLoad, Origin, then Name. Zero for DSL files.
	Created time.Time
	// FirstLoad is the load of the DSL directory at which the file first
	// appeared (see Gateway.FirstLoad); zero for other sources.
	FirstLoad uint64
	Hosts     []string
	// Listeners are the gateway listeners the service's hosts are served
	// on; nowhere else. Proxyless gRPC clients of the group see every
	// service.
	Listeners []ListenerRef
	// Delegations open paths of this service's hosts to other namespaces.
	Delegations []Delegation
	Routes      []Route
	Upstreams   []Upstream
	// JWT, when set, lets routes authenticate tokens (see RouteAuth).
	JWT *JWT
	// CORS is the cross-origin policy of every route without its own.
	CORS *CORSPolicy
	// RateLimit is the rate limits of every route without its own; its
	// Route field is not read.
	RateLimit *ratelimit.RouteLimits
	// Responses is the service's headers, HSTS, error pages, maintenance
	// and HTTPS redirect (see responses.go); nil for the defaults.
	Responses *ServiceResponses
	// AccessLogOff leaves this service's requests out of the gateway's
	// access log (on by default).
	AccessLogOff bool
	// GatewayAPI marks a service built from a Gateway API route. The
	// Gateway's allowedRoutes already governed which namespaces attach to
	// which listener, so Resolve applies neither host ownership nor the
	// catch-all rule to it, and it claims no host against other services.
	// It is served only on its Listeners (none: nowhere, not even to
	// proxyless gRPC clients), and its routes are never duplicates: they
	// take Gateway API's precedence, which serves the oldest route's match
	// first.
	GatewayAPI bool
}

// Route matches requests and sends them to weighted upstream targets.
type Route struct {
	Name string
	// Prefix, Exact (the whole path) and Regex (RE2, the whole path):
	// exactly one is set.
	Prefix string
	Exact  string
	Regex  string
	// SegmentPrefix makes Prefix match whole path segments, as Gateway
	// API's PathPrefix does: "/foo" matches /foo and /foo/bar, not
	// /foobar. A trailing "/" of Prefix is not read.
	SegmentPrefix bool
	// Method, when set, matches only requests of that HTTP method.
	Method  string
	Headers []HeaderMatch
	Queries []QueryMatch
	Targets []WeightedTarget
	Rewrite *Rewrite
	// Redirect answers with a redirect instead of forwarding (Targets
	// empty); URLRewrite changes host and path before forwarding.
	Redirect   *Redirect
	URLRewrite *URLRewrite
	// Mirrors copy requests to other upstreams of the service; their
	// answers are dropped.
	Mirrors []Mirror
	// Timeout and IdleTimeout are zero for the defaults; a negative
	// value disables that timeout (a long stream then still ends when
	// idle for IdleTimeout).
	Timeout     time.Duration
	IdleTimeout time.Duration
	// BackendTimeout, when positive, bounds each request to an upstream
	// (Gateway API's backendRequest) within Timeout, which bounds the
	// whole request; it is the retries' per-try timeout unless they set
	// their own.
	BackendTimeout time.Duration
	// FailedWeight is the weight, beside Targets', of backends that
	// could not be resolved (Gateway API): that share of requests is
	// answered 500, as the spec asks, instead of going to the others.
	FailedWeight uint32
	// FailedStatus is the status that share is answered with: 500
	// (zero), or 503, which gRPC clients read as UNAVAILABLE, what
	// GRPCRoute asks for its invalid backends.
	FailedStatus int
	// Precedence, when positive, ranks a Gateway API route among the
	// routes of its host in place of its path's length (see
	// GRPCPrecedence).
	Precedence int
	Retries    *RetryPolicy
	Sticky     *CookieSticky
	// Interceptors run in order in the authorization service before the
	// request goes upstream (Envoy's ext_authz); empty: never called.
	Interceptors chain.Chain
	// Auth, when set, overrides the service's JWT requirement and checks
	// roles. A service with JWT authenticates every route.
	Auth *RouteAuth
	// CORS replaces the service's cross-origin policy on this route.
	CORS *CORSPolicy
	// RateLimit replaces the service's rate limits on this route; nil for
	// the service's. Its Route field is not read: the route's identifier
	// is RouteID (see RouteLimits).
	RateLimit *ratelimit.RouteLimits
	// Responses is the route's own headers, error pages, maintenance,
	// direct response and HTTPS redirect; nil for the service's.
	Responses *RouteResponses
	// WebSocket lets requests of this route upgrade to WebSocket.
	WebSocket bool
	// Canary sends some of the route's requests to another upstream.
	Canary *Canary
}

// HeaderMatch matches one request header exactly, by RE2 Regex, or by
// presence when Exact and Regex are empty and Present is true.
type HeaderMatch struct {
	Name    string
	Exact   string
	Regex   string
	Present bool
}

// WeightedTarget is an upstream of the same service with a relative weight.
// A lone target's weight is not read. Among several, a target of weight 0
// gets no traffic, and a route whose targets all weigh 0 answers 500 (the
// Gateway API rule); a source meaning "no traffic" for a lone target
// writes a direct response instead.
type WeightedTarget struct {
	Upstream string
	Weight   uint32
	// Headers edits the requests sent to this target and its answers,
	// besides the route's own edits, which apply after (Gateway API
	// backendRefs[].filters); nil for none.
	Headers *HeaderRules
}

// Rewrite replaces the part of the path matched by Regex with Substitution
// (RE2 syntax, \1 for groups).
type Rewrite struct {
	Regex        string
	Substitution string
}

// RetryPolicy retries failed requests.
type RetryPolicy struct {
	Attempts uint32
	On       string // Envoy retry_on, e.g. "5xx,connect-failure"
	PerTry   time.Duration
	// Codes are the response status codes retried (Envoy's
	// retriable_status_codes, read when On has retriable-status-codes,
	// as the default On does).
	Codes []uint32
	// Backoff, when positive, is the least wait before a retry (Envoy's
	// base interval; later retries back off exponentially from it).
	Backoff time.Duration
}

// CookieSticky pins a client to an endpoint with a cookie.
type CookieSticky struct {
	Cookie string
	TTL    time.Duration
	Path   string
}

// Upstream is a set of endpoints: one cluster, named "service/upstream".
type Upstream struct {
	Name string
	// HTTP2 makes the gateway speak HTTP/2 (e.g. gRPC) to the endpoints.
	HTTP2     bool
	Endpoints []Endpoint
	// DNS, when set, names the endpoints by DNS instead of Endpoints
	// (which is then empty): each gateway resolves it (see dns.go).
	DNS *DNSName
	// HealthCheck, when set, probes every endpoint actively (see health.go).
	HealthCheck      *HealthCheck
	OutlierDetection OutlierDetection
	CircuitBreakers  CircuitBreakers
	// SlowStart ramps the traffic of a new endpoint up over this window;
	// zero means the default, negative turns it off.
	SlowStart time.Duration
	// TLS, when set, makes the cluster speak TLS to the endpoints.
	TLS *UpstreamTLS
}

// Endpoint is one backend address with an optional weight (default 1).
type Endpoint struct {
	Addr   netip.AddrPort
	Weight uint32
}

// FailedBackendCluster is the cluster a route's FailedWeight goes to. No
// cluster has this name (it is no service/upstream pair), so Envoy
// answers those requests with the route's cluster_not_found_response_code
// (500); the validator knows it is meant to be missing.
const FailedBackendCluster = "tlb.failed-backend"

// ClusterName returns the global name of a service's upstream.
func ClusterName(service, upstream string) string { return service + "/" + upstream }
