package api

// RouteRow is one route as a gateway listener serves it: a row of the
// route table an l7 server serves as JSON (GET /routes on its obs
// listener), which the console and operators read.
type RouteRow struct {
	Gateway  string `json:"gateway,omitempty"` // empty: proxyless clients only
	Listener string `json:"listener,omitempty"`
	VIP      string `json:"vip,omitempty"`
	Port     uint32 `json:"port,omitempty"`
	Protocol string `json:"protocol,omitempty"`
	Host     string `json:"host"`
	// Match is "prefix", "exact" or "regex"; Path is what it matches.
	Match  string `json:"match"`
	Path   string `json:"path"`
	Method string `json:"method,omitempty"`
	// Service is the service's name, Namespace its owner (empty for the
	// DSL), Origin where it came from (a file, or namespace/name).
	Service   string `json:"service"`
	Namespace string `json:"namespace,omitempty"`
	Origin    string `json:"origin"`
	// Source is "dsl" for the operator's files, "kubernetes" otherwise
	// (Service annotations, Gateway API routes).
	Source    string          `json:"source"`
	Upstreams []RouteUpstream `json:"upstreams,omitempty"`
	// Redirect is set when the route answers with a redirect instead.
	Redirect bool `json:"redirect,omitempty"`
}

// RouteUpstream is an upstream a route sends traffic to, with its weight
// and its endpoints' addresses.
type RouteUpstream struct {
	Name      string   `json:"name"`
	Weight    uint32   `json:"weight"`
	Endpoints []string `json:"endpoints,omitempty"`
}

// Routes is the body of GET /routes.
type Routes struct {
	Group  string     `json:"group"`
	Routes []RouteRow `json:"routes"`
}
