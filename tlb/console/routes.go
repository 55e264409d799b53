package console

import (
	"encoding/json"
	"fmt"
	"strings"
)

// L7Route is one route an l7 server serves, as its GET /routes lists it
// (l7/serve.RouteRow; the console reads the JSON, not that package).
type L7Route struct {
	Gateway   string       `json:"gateway"`
	Listener  string       `json:"listener"`
	VIP       string       `json:"vip"`
	Port      uint32       `json:"port"`
	Protocol  string       `json:"protocol"`
	Host      string       `json:"host"`
	Match     string       `json:"match"`
	Path      string       `json:"path"`
	Method    string       `json:"method"`
	Service   string       `json:"service"`
	Namespace string       `json:"namespace"`
	Origin    string       `json:"origin"`
	Source    string       `json:"source"` // "dsl" or "kubernetes"
	Upstreams []L7Upstream `json:"upstreams"`
	Redirect  bool         `json:"redirect"`
}

// L7Upstream is an upstream of a route with its weight and endpoints.
type L7Upstream struct {
	Name      string   `json:"name"`
	Weight    uint32   `json:"weight"`
	Endpoints []string `json:"endpoints"`
}

// maxRoutes bounds the routes kept from one l7 server.
const maxRoutes = 10000

// parseRoutes reads the body of an l7 server's GET /routes.
func parseRoutes(body string) ([]L7Route, error) {
	var doc struct {
		Routes []L7Route `json:"routes"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		return nil, fmt.Errorf("parse routes: %w", err)
	}
	if len(doc.Routes) > maxRoutes {
		doc.Routes = doc.Routes[:maxRoutes]
	}
	return doc.Routes, nil
}

// VIPRoute is an L7 route of a VIP and the l7 server that reports it.
type VIPRoute struct {
	Server string
	L7Route
}

// Targets says where the route sends traffic: "web 90% (10.0.0.1:8080),
// canary 10%", or "redirect".
func (r VIPRoute) Targets() string {
	if r.Redirect {
		return "redirect"
	}
	var total uint32
	for _, u := range r.Upstreams {
		total += u.Weight
	}
	parts := make([]string, 0, len(r.Upstreams))
	for _, u := range r.Upstreams {
		s := u.Name
		if len(r.Upstreams) > 1 && total > 0 {
			s += fmt.Sprintf(" %d%%", u.Weight*100/total)
		}
		if len(u.Endpoints) > 0 {
			s += " (" + strings.Join(u.Endpoints, " ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
