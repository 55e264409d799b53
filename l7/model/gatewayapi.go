package model

// The parts of the model that Gateway API needs beyond the DSL: TLS
// passthrough listeners, query matches, redirects, URL rewrites and
// request mirrors. The DSL does not produce them (yet); the translator
// handles them for every source alike.

// TLS is a listener that routes TLS connections by SNI without
// terminating them (see Listener.Passthrough).
const TLS Protocol = "TLS"

// SNITarget forwards TLS connections whose SNI is one of ServerNames
// ("*.example.com" allowed) to weighted clusters ("service/upstream").
// One entry of a listener may list no names: it takes every connection
// no other entry does (even one without SNI). Weights are those of
// WeightedTarget, except that some target must weigh more than 0.
type SNITarget struct {
	ServerNames []string
	Targets     []WeightedCluster
	// Certificate, when set, terminates the connections: Envoy serves
	// this certificate (by name, one the gateway declares) and forwards
	// the plain TCP stream (see tlsterminate.go). Empty: passthrough.
	Certificate string
}

// WeightedCluster is a cluster by global name with a relative weight.
type WeightedCluster struct {
	Cluster string
	Weight  uint32
}

// QueryMatch matches one query parameter exactly, or by RE2 Regex.
type QueryMatch struct {
	Name  string
	Exact string
	Regex string
}

// Redirect answers a request with a redirect. Empty fields keep the
// request's own value; StatusCode is 301, 302, 303, 307 or 308 (zero for
// 302).
type Redirect struct {
	Scheme     string
	Hostname   string
	Port       uint32
	Path       *PathModifier
	StatusCode int
}

// RedirectCode reports whether code is a redirect status the gateways
// answer with: 301, 302, 303, 307 or 308, the codes Gateway API allows.
func RedirectCode(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// URLRewrite rewrites the Host header and/or the path of a request
// before it is forwarded.
type URLRewrite struct {
	Hostname string
	Path     *PathModifier
}

// PathModifier replaces the whole path (Full) or the matched prefix of a
// Prefix route (ReplacePrefix, when IsPrefix).
type PathModifier struct {
	Full          string
	IsPrefix      bool
	ReplacePrefix string
}

// Mirror copies a share of a route's requests to an upstream of the same
// service; Percent is 1..100 (zero for 100).
type Mirror struct {
	Upstream string
	Percent  uint32
}

// GRPCPrecedence is the Precedence of a GRPCRoute match of the service
// and method patterns svc and method ("" for any). The spec
// (apis/v1/grpcroute_types.go, GRPCRouteRule.Matches): "Precedence MUST
// be given to the rule with the largest number of: [...] Characters in a
// matching service. Characters in a matching method. Header matches." A
// match naming a service outranks every one that does not; the method
// breaks ties. Both fields are at most 1024 characters long.
func GRPCPrecedence(svc, method string) int {
	if svc == "" && method == "" {
		return 0
	}
	return 1 + len(svc)*2048 + len(method)
}
