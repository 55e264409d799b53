package api

// The Service annotations the L7 source reads. Each maps to the model
// field that the same key of a DSL gateway/service/v1 file fills.
const (
	// AnnotationL7Hosts is a comma-separated list of host names (DSL hosts);
	// unset serves "*".
	AnnotationL7Hosts = "tlb.io/l7-hosts"
	// AnnotationL7PathPrefix is the route's path prefix (DSL routes[0].prefix);
	// default "/".
	AnnotationL7PathPrefix = "tlb.io/l7-path-prefix"
	// AnnotationL7Group is the gateway group (DSL group); default "default".
	AnnotationL7Group = "tlb.io/l7-group"
	// AnnotationL7Timeout is the request timeout (DSL timeout), e.g. "30s",
	// or "off" for long streams (SSE, gRPC streaming).
	AnnotationL7Timeout = "tlb.io/l7-timeout"
	// AnnotationL7IdleTimeout is the stream idle timeout (DSL idleTimeout),
	// e.g. "10m" or "off".
	AnnotationL7IdleTimeout = "tlb.io/l7-idle-timeout"
	// AnnotationL7HTTP2 makes the gateway speak HTTP/2 to the endpoints (DSL
	// upstreams[0].http2), for gRPC backends.
	AnnotationL7HTTP2 = "tlb.io/l7-http2"
	// AnnotationL7Port names the Service port (by name or number) that the
	// route sends to; default the first port of the Service.
	AnnotationL7Port = "tlb.io/l7-port"
	// AnnotationL7TLSSecret names a Secret of type kubernetes.io/tls in the
	// Service's namespace. With it the gateway listener on the Service's
	// VIP is HTTPS, chosen by SNI for the hosts of tlb.io/l7-hosts.
	AnnotationL7TLSSecret = "tlb.io/l7-tls-secret"
	// AnnotationL7Delegate opens paths of this Service's hosts to Services of
	// other namespaces: comma-separated prefix=namespace pairs (DSL
	// delegations), e.g. "/api=team-b,/api=team-c,/docs=*".
	AnnotationL7Delegate = "tlb.io/l7-delegate"
	// AnnotationL7HealthCheck turns on an active health check of the
	// endpoints (DSL upstreams[0].healthCheck): "http:/path", "tcp",
	// "grpc" or "grpc:service.Name".
	AnnotationL7HealthCheck = "tlb.io/l7-health-check"
	// AnnotationL7HealthCheckInterval is the interval of that check (DSL
	// healthCheck.interval), e.g. "10s".
	AnnotationL7HealthCheckInterval = "tlb.io/l7-health-check-interval"
	// AnnotationL7OutlierDetection "false" turns passive ejection off (DSL
	// outlierDetection.disabled).
	AnnotationL7OutlierDetection = "tlb.io/l7-outlier-detection"
	// AnnotationL7MaxConnections, AnnotationL7MaxPendingRequests and
	// AnnotationL7MaxRequests are circuit-breaker limits per gateway (DSL
	// circuitBreakers.*), positive integers.
	AnnotationL7MaxConnections     = "tlb.io/l7-max-connections"
	AnnotationL7MaxPendingRequests = "tlb.io/l7-max-pending-requests"
	AnnotationL7MaxRequests        = "tlb.io/l7-max-requests"
	// AnnotationL7SlowStart is the slow-start window of new endpoints (DSL
	// slowStart), e.g. "30s", or "off".
	AnnotationL7SlowStart = "tlb.io/l7-slow-start"
	// AnnotationL7Interceptors is the route's interceptors (DSL
	// routes[0].interceptors) as the JSON array the authorization service
	// reads, e.g. `[{"type":"sessionInterceptor"},{"type":"csrfInterceptor"}]`,
	// checked as strictly as the DSL. External interceptors and htpasswd
	// files are named only by what the operator declared
	// (`{"type":"external","id":"x","endpoint":"audit"}`,
	// `{"type":"basicAuth","users":"ops"}`), never by address, URL or path.
	AnnotationL7Interceptors = "tlb.io/l7-interceptors"
	// AnnotationL7CORS is the service's cross-origin policy (DSL cors) as
	// JSON with the DSL's keys, e.g. `{"allowOrigins":["https://app.example.com"],
	// "allowMethods":["GET"],"allowCredentials":true,"maxAge":"10m"}`.
	AnnotationL7CORS = "tlb.io/l7-cors"
	// AnnotationL7RateLimit is the service's rate limits (DSL rateLimit) as
	// JSON with the DSL's keys, e.g. `{"local":{"requestsPerSecond":10,"burst":20}}`.
	AnnotationL7RateLimit = "tlb.io/l7-rate-limit"
)

// The edge-basics annotations (docs/l7.md, "Edge basics").
const (
	// AnnotationL7AccessLog is "on" (the default) or "off": "off" leaves the
	// Service's requests out of the gateway's JSON access log (DSL
	// accessLog).
	AnnotationL7AccessLog = "tlb.io/l7-access-log"
	// AnnotationL7WebSocket "true" lets the route upgrade to WebSocket (DSL
	// routes[0].websocket).
	AnnotationL7WebSocket = "tlb.io/l7-websocket"
	// AnnotationL7Tracing exports the spans of the Service's own gateway
	// listener to an OpenTelemetry collector (DSL gateway tracing), as
	// JSON with the DSL's keys, e.g. `{"otlpEndpoint":"10.0.0.9:4317","samplePercent":10}`.
	AnnotationL7Tracing = "tlb.io/l7-tracing"
)

// The Service annotations of the response functions: each is the DSL key
// of the same name, as strict JSON (unknown keys are errors), checked
// with the service by model.CheckService.
const (
	// AnnotationL7RequestHeaders changes the headers sent upstream (DSL
	// requestHeaders), e.g. `{"set":{"x-env":"prod"},"remove":["x-debug"]}`.
	AnnotationL7RequestHeaders = "tlb.io/l7-request-headers"
	// AnnotationL7ResponseHeaders changes the headers sent to clients (DSL
	// responseHeaders), e.g. `{"set":{"x-frame-options":"DENY"}}`.
	AnnotationL7ResponseHeaders = "tlb.io/l7-response-headers"
	// AnnotationL7HSTS changes the strict-transport-security header of an
	// HTTPS listener (DSL hsts), e.g. `{"maxAge":"8760h","includeSubDomains":true}`
	// or `{"disabled":true}`.
	AnnotationL7HSTS = "tlb.io/l7-hsts"
	// AnnotationL7ErrorPages replaces the bodies of chosen statuses (DSL
	// errorPages), e.g. `[{"statuses":[503],"body":"<h1>Back soon</h1>","contentType":"text/html"}]`.
	AnnotationL7ErrorPages = "tlb.io/l7-error-pages"
	// AnnotationL7Maintenance answers every request from the gateway while
	// enabled (DSL maintenance), e.g. `{"enabled":true,"retryAfter":"10m"}`.
	AnnotationL7Maintenance = "tlb.io/l7-maintenance"
	// AnnotationL7DirectResponse makes the Service's route answer itself
	// (DSL routes[0].directResponse; the route then has no target), e.g.
	// `{"status":200,"body":"ok"}`.
	AnnotationL7DirectResponse = "tlb.io/l7-direct-response"
	// AnnotationL7RedirectHTTPS "true" makes the Service's route answer 301
	// to https:// on HTTP listeners (DSL redirectHTTPS).
	AnnotationL7RedirectHTTPS = "tlb.io/l7-redirect-https"
)

// AnnotationL7TLSPolicy is the TLS policy of the HTTPS listener on the
// Service's VIP (DSL listener tls) as JSON with the DSL's keys, e.g.
// `{"minVersion":"1.3"}` or `{"cipherSuites":["ECDHE-ECDSA-AES128-GCM-SHA256"]}`;
// only with tlb.io/l7-tls-secret. Without it the listener has the
// defaults (TLS 1.2 to 1.3, ECDHE with AEAD).
const AnnotationL7TLSPolicy = "tlb.io/l7-tls"
