package api

import "strconv"

// HealthCheck is an upstream's active health check (DSL
// upstreams[].healthCheck): exactly one of HTTP, TCP and GRPC, and the
// timing shared by all three.
type HealthCheck struct {
	HTTP *HTTPHealthCheck `json:"http,omitempty"`
	TCP  *TCPHealthCheck  `json:"tcp,omitempty"`
	GRPC *GRPCHealthCheck `json:"grpc,omitempty"`
	// Interval and Timeout are durations such as "10s".
	Interval           *string `json:"interval,omitempty"`
	Timeout            *string `json:"timeout,omitempty"`
	UnhealthyThreshold uint32  `json:"unhealthyThreshold,omitempty"`
	HealthyThreshold   uint32  `json:"healthyThreshold,omitempty"`
}

// HTTPHealthCheck asks for Path and expects one of ExpectedStatuses
// (default 200).
type HTTPHealthCheck struct {
	Path             string        `json:"path"`
	Host             string        `json:"host,omitempty"`
	ExpectedStatuses []StatusRange `json:"expectedStatuses,omitempty"`
}

// TCPHealthCheck only connects.
type TCPHealthCheck struct{}

// GRPCHealthCheck asks the gRPC health service about Service.
type GRPCHealthCheck struct {
	Service string `json:"service,omitempty"`
	Host    string `json:"host,omitempty"`
}

// StatusRange is one entry of expectedStatuses as written: a code (200)
// or a range of codes, both ends included ("200-299"). l7/policy parses
// it, naming the entry in errors.
type StatusRange string

// UnmarshalJSON keeps a string's text, or any other value as written,
// for the conversion to judge.
func (r *StatusRange) UnmarshalJSON(b []byte) error {
	s := string(b)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	*r = StatusRange(s)
	return nil
}

// OutlierDetection is an upstream's passive ejection (DSL
// upstreams[].outlierDetection).
type OutlierDetection struct {
	Disabled                  bool   `json:"disabled,omitempty"`
	Consecutive5xx            uint32 `json:"consecutive5xx,omitempty"`
	ConsecutiveGatewayFailure uint32 `json:"consecutiveGatewayFailure,omitempty"`
	// Interval and BaseEjectionTime are durations such as "10s".
	Interval           *string `json:"interval,omitempty"`
	BaseEjectionTime   *string `json:"baseEjectionTime,omitempty"`
	MaxEjectionPercent uint32  `json:"maxEjectionPercent,omitempty"`
}

// CircuitBreakers are an upstream's limits per gateway (DSL
// upstreams[].circuitBreakers).
type CircuitBreakers struct {
	MaxConnections     uint32 `json:"maxConnections,omitempty"`
	MaxPendingRequests uint32 `json:"maxPendingRequests,omitempty"`
	MaxRequests        uint32 `json:"maxRequests,omitempty"`
	MaxRetries         uint32 `json:"maxRetries,omitempty"`
}
