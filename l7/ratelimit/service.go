package ratelimit

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"

	"sigs.k8s.io/yaml"
)

// DescriptorRoute is the descriptor key that names the route (Envoy's
// generic_key action with this descriptor_key); its value is
// RouteLimits.Route.
const DescriptorRoute = "route"

// DescriptorClientIP is the descriptor key Envoy's remote_address action
// produces; its value is the client's address (the trusted address of
// X-Forwarded-For, or the peer when there is none).
const DescriptorClientIP = "remote_address"

// ServiceConfig is the configuration of the envoyproxy/ratelimit service
// for one domain (one gateway group), in the service's own YAML schema
// (its README, "Configuration"): a tree of descriptors; a request's
// descriptor matches a path in the tree entry by entry, and the rate limit
// of the node it ends on applies. An entry without a value matches any
// value and counts each value on its own.
type ServiceConfig struct {
	Domain      string              `json:"domain"`
	Descriptors []ServiceDescriptor `json:"descriptors"`
}

// ServiceDescriptor is one node of the descriptor tree.
type ServiceDescriptor struct {
	Key         string              `json:"key"`
	Value       string              `json:"value,omitempty"`
	RateLimit   *ServiceRateLimit   `json:"rate_limit,omitempty"`
	Descriptors []ServiceDescriptor `json:"descriptors,omitempty"`
}

// ServiceRateLimit is requests_per_unit per unit, counted in a fixed window
// aligned to the clock.
type ServiceRateLimit struct {
	Unit            Unit   `json:"unit"`
	RequestsPerUnit uint32 `json:"requests_per_unit"`
}

// domainName is what a domain may be: it names the service's config file.
var domainName = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$`)

// Service builds the service configuration of domain from the limits of
// its routes, matching the descriptors RouteRateLimits makes Envoy send:
//
//	descriptors:
//	- key: route
//	  value: <Route>
//	  rate_limit: <perRoute>         # descriptor [route]
//	  descriptors:
//	  - key: remote_address          # no value: one counter per client
//	    rate_limit: <perClientIP>    # descriptor [route, remote_address]
//
// Routes without a global limit are left out; the rest are sorted by
// route, so equal limits give equal bytes. The limits must be valid
// (ValidateGroup).
func Service(domain string, routes []RouteLimits) (ServiceConfig, error) {
	if !domainName.MatchString(domain) {
		return ServiceConfig{}, &FieldError{Field: "domain", Msg: fmt.Sprintf("%q is not a domain (a gateway group name: lower-case letters, digits, . and -)", domain)}
	}
	if err := ValidateGroup(routes); err != nil {
		return ServiceConfig{}, err
	}
	cfg := ServiceConfig{Domain: domain, Descriptors: []ServiceDescriptor{}}
	for _, r := range routes {
		g := r.Global
		if g == nil {
			continue
		}
		d := ServiceDescriptor{Key: DescriptorRoute, Value: r.Route, RateLimit: serviceLimit(g.PerRoute)}
		if g.PerClientIP != nil {
			d.Descriptors = []ServiceDescriptor{{Key: DescriptorClientIP, RateLimit: serviceLimit(g.PerClientIP)}}
		}
		cfg.Descriptors = append(cfg.Descriptors, d)
	}
	slices.SortFunc(cfg.Descriptors, func(a, b ServiceDescriptor) int { return cmp.Compare(a.Value, b.Value) })
	return cfg, nil
}

func serviceLimit(q *Quota) *ServiceRateLimit {
	if q == nil {
		return nil
	}
	return &ServiceRateLimit{Unit: q.Unit, RequestsPerUnit: q.Requests}
}

// YAML is the file the service loads (keys sorted, so the bytes depend on
// the configuration alone).
func (c ServiceConfig) YAML() ([]byte, error) {
	return yaml.Marshal(c)
}

// FileName is the name of c's file in the service's runtime directory
// (RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/config/): one file per domain.
func (c ServiceConfig) FileName() string { return c.Domain + ".yaml" }
