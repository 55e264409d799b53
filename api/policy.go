package api

// The gateway functions' schema: one Go type per function, with the JSON
// keys every front end reads. A DSL file (l7/dsl) embeds them in its
// gateway/service/v1 and gateway/gateway/v1 documents, the Service
// annotations (tlb.io/l7-cors, tlb.io/l7-rate-limit, the response
// annotations, tlb.io/l7-tls) hold one of them as JSON, and a
// TrafficPolicy's spec (api/v1alpha1) embeds them too; l7/policy has the
// one conversion of each to the L7 model. A duration is written as a Go
// duration string ("10m").

// CORS is the cross-origin policy of a service or route (DSL cors,
// tlb.io/l7-cors, TrafficPolicy spec.cors).
type CORS struct {
	AllowOrigins     []string `json:"allowOrigins"`
	AllowMethods     []string `json:"allowMethods,omitempty"`
	AllowHeaders     []string `json:"allowHeaders,omitempty"`
	ExposeHeaders    []string `json:"exposeHeaders,omitempty"`
	AllowCredentials bool     `json:"allowCredentials,omitempty"`
	// MaxAge is how long a browser may cache the preflight answer, a
	// duration such as "10m"; empty sends none.
	MaxAge string `json:"maxAge,omitempty"`
}

// RateLimit is the rate limits of a service or route (DSL rateLimit,
// tlb.io/l7-rate-limit, TrafficPolicy spec.rateLimit).
type RateLimit struct {
	Local  *LocalRateLimit  `json:"local,omitempty"`
	Global *GlobalRateLimit `json:"global,omitempty"`
}

// LocalRateLimit is a token bucket per gateway.
type LocalRateLimit struct {
	// RequestsPerSecond may be fractional ("0.5" is one every 2s).
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	// Burst is the bucket's size, 0 to 4294967295.
	Burst int64 `json:"burst,omitempty"`
}

// GlobalRateLimit is enforced by the rate limit service across gateways.
type GlobalRateLimit struct {
	PerClientIP *RateLimitQuota `json:"perClientIP,omitempty"`
	PerRoute    *RateLimitQuota `json:"perRoute,omitempty"`
}

// RateLimitQuota is Requests per Unit (second, minute, hour, day).
type RateLimitQuota struct {
	// Requests is 1 to 4294967295.
	Requests int64  `json:"requests"`
	Unit     string `json:"unit"`
}

// JWT is what every front end's jwt block shares: the token's checks and
// what the upstream gets of it. Each front end adds its own key sources
// (files in the DSL, a Secret or inline keys in a TrafficPolicy).
type JWT struct {
	Issuer    string   `json:"issuer,omitempty"`
	Audiences []string `json:"audiences,omitempty"`
	// Algorithm is the HMAC algorithm (HS256, the default, HS384 or
	// HS512); only with an HMAC secret.
	Algorithm string `json:"algorithm,omitempty"`
	// Cookie is read for the token when Authorization carries none.
	Cookie string `json:"cookie,omitempty"`
	// ClaimMappings maps a claim to the request header the upstream gets
	// it in.
	ClaimMappings      map[string]string `json:"claimMappings,omitempty"`
	StripAuthorization bool              `json:"stripAuthorization,omitempty"`
	// Required (default true) requires a valid token on every route.
	Required *bool `json:"required,omitempty"`
}

// RouteAuth is a route's JWT requirement and roles (DSL routes[].auth,
// TrafficPolicy spec.auth).
type RouteAuth struct {
	Required *bool    `json:"required,omitempty"`
	Roles    []string `json:"roles,omitempty"`
	RolesAll []string `json:"rolesAll,omitempty"`
}

// Tracing exports a gateway's spans to an OpenTelemetry collector (DSL
// gateway tracing, tlb.io/l7-tracing).
type Tracing struct {
	OTLPEndpoint string `json:"otlpEndpoint"`
	// SamplePercent is the share of requests traced, in percent
	// (default 100).
	SamplePercent *float64 `json:"samplePercent,omitempty"`
	ServiceName   string   `json:"serviceName,omitempty"`
}
