package dsl

import "encoding/json"

// The kinds a file may declare.
const (
	KindService = "gateway/service/v1"
	KindGateway = "gateway/gateway/v1"
)

type serviceDoc struct {
	Kind        string        `json:"kind"`
	Name        string        `json:"name"`
	Group       string        `json:"group,omitempty"`
	Hosts       []string      `json:"hosts,omitempty"`
	Listeners   []string      `json:"listeners,omitempty"`
	Delegations []delegateDoc `json:"delegations,omitempty"`
	Timeout     *string       `json:"timeout,omitempty"`
	IdleTimeout *string       `json:"idleTimeout,omitempty"`
	Upstreams   []upstreamDoc `json:"upstreams"`
	Routes      []routeDoc    `json:"routes"`
	JWT         *jwtDoc       `json:"jwt,omitempty"`
	CORS        *corsDoc      `json:"cors,omitempty"`
	RateLimit   *rateLimitDoc `json:"rateLimit,omitempty"`
	// Interceptor is the seed's service-level default of its external
	// interceptors' endpoint.
	Interceptor *interceptorDoc `json:"interceptor,omitempty"`
	serviceResponsesDoc
	// AccessLog is "on" (the default) or "off" (see edge.go).
	AccessLog *string `json:"accessLog,omitempty"`
}

type interceptorDoc struct {
	Transport string `json:"transport,omitempty"`
	Address   string `json:"address,omitempty"`
	URL       string `json:"url,omitempty"`
}

type corsDoc struct {
	AllowOrigins     []string `json:"allowOrigins"`
	AllowMethods     []string `json:"allowMethods,omitempty"`
	AllowHeaders     []string `json:"allowHeaders,omitempty"`
	ExposeHeaders    []string `json:"exposeHeaders,omitempty"`
	AllowCredentials bool     `json:"allowCredentials,omitempty"`
	MaxAge           *string  `json:"maxAge,omitempty"`
}

type jwtDoc struct {
	Issuer         string            `json:"issuer,omitempty"`
	Audiences      []string          `json:"audiences,omitempty"`
	HMACSecretFile string            `json:"hmacSecretFile,omitempty"`
	Algorithm      string            `json:"algorithm,omitempty"`
	PublicKeyFile  string            `json:"publicKeyFile,omitempty"`
	JWKSFile       string            `json:"jwksFile,omitempty"`
	RemoteJWKS     *remoteJWKSDoc    `json:"remoteJwks,omitempty"`
	Cookie         string            `json:"cookie,omitempty"`
	ClaimMappings  map[string]string `json:"claimMappings,omitempty"`
	StripAuth      bool              `json:"stripAuthorization,omitempty"`
	Required       *bool             `json:"required,omitempty"`
}

type remoteJWKSDoc struct {
	URL           string  `json:"url"`
	Upstream      string  `json:"upstream"`
	CacheDuration *string `json:"cacheDuration,omitempty"`
}

type authDoc struct {
	Required *bool    `json:"required,omitempty"`
	Roles    []string `json:"roles,omitempty"`
	RolesAll []string `json:"rolesAll,omitempty"`
}

type delegateDoc struct {
	Prefix     string   `json:"prefix"`
	Namespaces []string `json:"namespaces"`
}

type upstreamDoc struct {
	Name             string               `json:"name"`
	HTTP2            bool                 `json:"http2,omitempty"`
	Endpoints        []string             `json:"endpoints"`
	HealthCheck      *healthCheckDoc      `json:"healthCheck,omitempty"`
	OutlierDetection *outlierDetectionDoc `json:"outlierDetection,omitempty"`
	CircuitBreakers  *circuitBreakersDoc  `json:"circuitBreakers,omitempty"`
	SlowStart        *string              `json:"slowStart,omitempty"`
	TLS              *upstreamTLSDoc      `json:"tls,omitempty"`
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
	Auth         *authDoc        `json:"auth,omitempty"`
	CORS         *corsDoc        `json:"cors,omitempty"`
	RateLimit    *rateLimitDoc   `json:"rateLimit,omitempty"`
	routeResponsesDoc
	WebSocket bool       `json:"websocket,omitempty"`
	Canary    *canaryDoc `json:"canary,omitempty"`
}

// rateLimitDoc is a route's rate limits, validated by l7/ratelimit.
type rateLimitDoc struct {
	Local  *localLimitDoc  `json:"local,omitempty"`
	Global *globalLimitDoc `json:"global,omitempty"`
}

type localLimitDoc struct {
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	Burst             uint32  `json:"burst"`
}

type globalLimitDoc struct {
	PerClientIP *quotaDoc `json:"perClientIP,omitempty"`
	PerRoute    *quotaDoc `json:"perRoute,omitempty"`
}

type quotaDoc struct {
	Requests uint32 `json:"requests"`
	Unit     string `json:"unit"`
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
	Tracing   *tracingDoc   `json:"tracing,omitempty"`
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
	TLS               *tlsPolicyDoc  `json:"tls,omitempty"`
	ClientCertificate *clientCertDoc `json:"clientCertificate,omitempty"`
}

type certDoc struct {
	Name     string   `json:"name"`
	SNI      []string `json:"sni"`
	CertFile string   `json:"certFile"`
	KeyFile  string   `json:"keyFile"`
}
