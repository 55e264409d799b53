package console

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tlbproject/tlb/api"
)

// maxRoutes bounds the routes kept from one l7 server.
const maxRoutes = 10000

// parseRoutes reads the body of an l7 server's GET /routes.
func parseRoutes(body string) ([]api.RouteRow, error) {
	var doc struct {
		Routes []api.RouteRow `json:"routes"`
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
	api.RouteRow
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
