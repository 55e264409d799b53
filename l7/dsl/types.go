package dsl

import (
	"encoding/json"

	"github.com/tlbproject/tlb/api"
)

// The kinds a file may declare.
const (
	KindService = "gateway/service/v1"
	KindGateway = "gateway/gateway/v1"
)

type serviceDoc struct {
	Kind        string         `json:"kind"`
	Name        string         `json:"name"`
	Group       string         `json:"group,omitempty"`
	Hosts       []string       `json:"hosts,omitempty"`
	Listeners   []string       `json:"listeners,omitempty"`
	Delegations []delegateDoc  `json:"delegations,omitempty"`
	Timeout     *string        `json:"timeout,omitempty"`
	IdleTimeout *string        `json:"idleTimeout,omitempty"`
	Upstreams   []upstreamDoc  `json:"upstreams"`
	Routes      []routeDoc     `json:"routes"`
	JWT         *jwtDoc        `json:"jwt,omitempty"`
	CORS        *api.CORS      `json:"cors,omitempty"`
	RateLimit   *api.RateLimit `json:"rateLimit,omitempty"`
	// Interceptor is the seed's service-level default of its external
	// interceptors' endpoint.
	Interceptor *interceptorDoc `json:"interceptor,omitempty"`
	api.ServiceResponses
	// AccessLog is "on" (the default) or "off" (see edge.go).
	AccessLog *string `json:"accessLog,omitempty"`
}

type interceptorDoc struct {
	// Endpoint names a declared endpoint (gateway/interceptors/v1)
	// instead of transport and address or URL.
	Endpoint  string `json:"endpoint,omitempty"`
	Transport string `json:"transport,omitempty"`
	Address   string `json:"address,omitempty"`
	URL       string `json:"url,omitempty"`
}

// jwtDoc is the jwt block: the schema every front end shares, and the
// key as a file (exactly one) or a remote JWKS.
type jwtDoc struct {
	api.JWT
	HMACSecretFile string         `json:"hmacSecretFile,omitempty"`
	PublicKeyFile  string         `json:"publicKeyFile,omitempty"`
	JWKSFile       string         `json:"jwksFile,omitempty"`
	RemoteJWKS     *remoteJWKSDoc `json:"remoteJwks,omitempty"`
}

type remoteJWKSDoc struct {
	URL           string  `json:"url"`
	Upstream      string  `json:"upstream"`
	CacheDuration *string `json:"cacheDuration,omitempty"`
}

type delegateDoc struct {
	Prefix     string   `json:"prefix"`
	Namespaces []string `json:"namespaces"`
}

type upstreamDoc struct {
	Name             string                `json:"name"`
	HTTP2            bool                  `json:"http2,omitempty"`
	Endpoints        []string              `json:"endpoints"`
	HealthCheck      *api.HealthCheck      `json:"healthCheck,omitempty"`
	OutlierDetection *api.OutlierDetection `json:"outlierDetection,omitempty"`
	CircuitBreakers  *api.CircuitBreakers  `json:"circuitBreakers,omitempty"`
	SlowStart        *string               `json:"slowStart,omitempty"`
	TLS              *upstreamTLSDoc       `json:"tls,omitempty"`
}

type routeDoc struct {
	Name        string      `json:"name,omitempty"`
	Prefix      string      `json:"prefix,omitempty"`
	Pattern     string      `json:"pattern,omitempty"`
	Headers     []headerDoc `json:"headers,omitempty"`
	Target      string      `json:"target,omitempty"`
	Targets     []targetDoc `json:"targets,omitempty"`
	Rewrite     *rewriteDoc `json:"rewrite,omitempty"`
	Timeout     *string     `json:"timeout,omitempty"`
	IdleTimeout *string     `json:"idleTimeout,omitempty"`
	Retries     *retriesDoc `json:"retries,omitempty"`
	Sticky      *stickyDoc  `json:"sticky,omitempty"`
	// Interceptors is decoded by chain.Decode, which is strict per type.
	Interceptors json.RawMessage `json:"interceptors,omitempty"`
	Auth         *api.RouteAuth  `json:"auth,omitempty"`
	CORS         *api.CORS       `json:"cors,omitempty"`
	RateLimit    *api.RateLimit  `json:"rateLimit,omitempty"`
	api.RouteResponses
	WebSocket bool       `json:"websocket,omitempty"`
	Canary    *canaryDoc `json:"canary,omitempty"`
}

type headerDoc struct {
	Name    string `json:"name"`
	Exact   string `json:"exact,omitempty"`
	Present bool   `json:"present,omitempty"`
}

type targetDoc struct {
	Upstream string `json:"upstream"`
	Weight   uint32 `json:"weight"`
}

type rewriteDoc struct {
	Old string `json:"old"`
	New string `json:"new"`
}

type retriesDoc struct {
	Attempts      uint32  `json:"attempts"`
	On            string  `json:"retryOn,omitempty"`
	PerTryTimeout *string `json:"perTryTimeout,omitempty"`
}

type stickyDoc struct {
	Cookie string  `json:"cookie"`
	TTL    *string `json:"ttl,omitempty"`
	Path   string  `json:"path,omitempty"`
}

type gatewayDoc struct {
	Kind      string        `json:"kind"`
	Name      string        `json:"name"`
	Group     string        `json:"group,omitempty"`
	Listeners []listenerDoc `json:"listeners"`
	Tracing   *api.Tracing  `json:"tracing,omitempty"`
}

type listenerDoc struct {
	Name          string `json:"name"`
	VIP           string `json:"vip"`
	Port          uint32 `json:"port"`
	Protocol      string `json:"protocol"`
	Target        string `json:"target,omitempty"`
	RedirectHTTPS bool   `json:"redirectHTTPS,omitempty"`
	// Default also serves the group's services that name no listener.
	Default      bool      `json:"default,omitempty"`
	Certificates []certDoc `json:"certificates,omitempty"`
	// TLS and ClientCertificate: see tlspolicy.go.
	TLS               *api.TLSPolicy `json:"tls,omitempty"`
	ClientCertificate *clientCertDoc `json:"clientCertificate,omitempty"`
	// XFFTrustedHops: see model.Listener.
	XFFTrustedHops uint32 `json:"xffTrustedHops,omitempty"`
}

type certDoc struct {
	Name     string   `json:"name"`
	SNI      []string `json:"sni"`
	CertFile string   `json:"certFile"`
	KeyFile  string   `json:"keyFile"`
}
