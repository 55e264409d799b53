package model_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/model"
)

// gatewayAPIService is a valid service using every Gateway API route
// field; the tests break one field at a time.
func gatewayAPIService() model.Service {
	s := svc("a", "a.example.com", "/api")
	s.Upstreams = append(s.Upstreams, model.Upstream{Name: "v"}, model.Upstream{Name: "shadow"})
	r := &s.Routes[0]
	r.Method = "GET"
	r.Headers = []model.HeaderMatch{{Name: "x-version", Regex: "^v[0-9]+$"}}
	r.Queries = []model.QueryMatch{{Name: "debug", Exact: "1"}, {Name: "id", Regex: "^[0-9]+$"}}
	r.Targets = []model.WeightedTarget{{Upstream: "u", Weight: 0}, {Upstream: "v", Weight: 3}}
	r.URLRewrite = &model.URLRewrite{Hostname: "internal.example.com", Path: &model.PathModifier{IsPrefix: true, ReplacePrefix: "/v2"}}
	r.Mirrors = []model.Mirror{{Upstream: "shadow", Percent: 10}}
	s.Routes = append(s.Routes,
		model.Route{Exact: "/old", Redirect: &model.Redirect{Scheme: "https", Hostname: "new.example.com", Port: 8443, StatusCode: 301, Path: &model.PathModifier{Full: "/new"}}},
		model.Route{Exact: "/off", Targets: []model.WeightedTarget{{Upstream: "u"}, {Upstream: "v"}}},
	)
	return s
}

func TestCheckGatewayAPIRoutes(t *testing.T) {
	if err := model.CheckService(gatewayAPIService()); err != nil {
		t.Fatalf("valid service rejected: %v", err)
	}
	for name, tc := range map[string]struct {
		edit  func(s *model.Service)
		field string
	}{
		"prefix and exact":         {func(s *model.Service) { s.Routes[0].Exact = "/x" }, "routes[0]: set exactly one of prefix and pattern"},
		"no path match":            {func(s *model.Service) { s.Routes[1].Exact = "" }, "routes[1]: set exactly one"},
		"exact without slash":      {func(s *model.Service) { s.Routes[1].Exact = "old" }, "routes[1].exact"},
		"method not a token":       {func(s *model.Service) { s.Routes[0].Method = "GET POST" }, "routes[0].method"},
		"header regex broken":      {func(s *model.Service) { s.Routes[0].Headers[0].Regex = "(" }, "routes[0].headers[0].regex"},
		"header exact and regex":   {func(s *model.Service) { s.Routes[0].Headers[0].Exact = "v1" }, "routes[0].headers[0]: set exact or regex"},
		"query regex broken":       {func(s *model.Service) { s.Routes[0].Queries[1].Regex = "[" }, "routes[0].queries[1].regex"},
		"query neither":            {func(s *model.Service) { s.Routes[0].Queries[0].Exact = "" }, "routes[0].queries[0]: set exactly one"},
		"query twice":              {func(s *model.Service) { s.Routes[0].Queries[1].Name = "debug" }, "routes[0].queries[1].name"},
		"query name empty":         {func(s *model.Service) { s.Routes[0].Queries[0].Name = "" }, "routes[0].queries[0].name"},
		"backend timeout longer":   {func(s *model.Service) { s.Routes[0].Timeout, s.Routes[0].BackendTimeout = time.Second, 2*time.Second }, "routes[0].backendTimeout"},
		"backend timeout < 0":      {func(s *model.Service) { s.Routes[0].BackendTimeout = -1 }, "routes[0].backendTimeout"},
		"failed weight, no target": {func(s *model.Service) { s.Routes[0].Targets, s.Routes[0].FailedWeight = nil, 1 }, "routes[0].failedWeight"},
		"redirect status":          {func(s *model.Service) { s.Routes[1].Redirect.StatusCode = 305 }, "routes[1].redirect.statusCode"},
		"redirect scheme":          {func(s *model.Service) { s.Routes[1].Redirect.Scheme = "ftp" }, "routes[1].redirect.scheme"},
		"redirect host":            {func(s *model.Service) { s.Routes[1].Redirect.Hostname = "*.example.com" }, "routes[1].redirect.hostname"},
		"redirect port":            {func(s *model.Service) { s.Routes[1].Redirect.Port = 70000 }, "routes[1].redirect.port"},
		"redirect with targets":    {func(s *model.Service) { s.Routes[1].Targets = []model.WeightedTarget{{Upstream: "u"}} }, "routes[1].redirect: a redirect route has no targets"},
		"redirect with mirror":     {func(s *model.Service) { s.Routes[1].Mirrors = []model.Mirror{{Upstream: "shadow"}} }, "routes[1].redirect: a redirect route forwards nothing"},
		"redirect replace on exact": {func(s *model.Service) {
			s.Routes[1].Redirect.Path = &model.PathModifier{IsPrefix: true, ReplacePrefix: "/"}
		}, "routes[1].redirect.path.replacePrefix"},
		"redirect full relative":    {func(s *model.Service) { s.Routes[1].Redirect.Path.Full = "new" }, "routes[1].redirect.path.full"},
		"rewrite full and prefix":   {func(s *model.Service) { s.Routes[0].URLRewrite.Path.Full = "/x" }, "routes[0].urlRewrite.path: set full or replacePrefix"},
		"rewrite prefix relative":   {func(s *model.Service) { s.Routes[0].URLRewrite.Path.ReplacePrefix = "v2" }, "routes[0].urlRewrite.path.replacePrefix"},
		"rewrite host wildcard":     {func(s *model.Service) { s.Routes[0].URLRewrite.Hostname = "*" }, "routes[0].urlRewrite.hostname"},
		"rewrite empty":             {func(s *model.Service) { s.Routes[0].URLRewrite = &model.URLRewrite{} }, "routes[0].urlRewrite: set a hostname or a path"},
		"rewrite twice":             {func(s *model.Service) { s.Routes[0].Rewrite = &model.Rewrite{Regex: "^/a", Substitution: "/b"} }, "routes[0].urlRewrite.path: the route already rewrites"},
		"mirror unknown upstream":   {func(s *model.Service) { s.Routes[0].Mirrors[0].Upstream = "nope" }, "routes[0].mirrors[0].upstream"},
		"mirror percent":            {func(s *model.Service) { s.Routes[0].Mirrors[0].Percent = 101 }, "routes[0].mirrors[0].percent"},
		"no target and no redirect": {func(s *model.Service) { s.Routes[2].Targets = nil }, "routes[2].targets"},
		"target of another service": {func(s *model.Service) { s.Routes[2].Targets[0].Upstream = "x" }, "routes[2].targets[0].upstream"},
		"redirect and direct answer": {func(s *model.Service) {
			s.Routes[1].Responses = &model.RouteResponses{DirectResponse: &model.DirectResponse{Status: 200}}
		}, "routes[1].redirect: a route answers with a redirect or a direct response"},
	} {
		t.Run(name, func(t *testing.T) {
			s := gatewayAPIService()
			tc.edit(&s)
			err := model.CheckService(s)
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %v, want one naming %q", err, tc.field)
			}
		})
	}
}

// passthroughConfig is a valid TLS passthrough gateway with the service
// its clusters belong to.
func passthroughConfig() model.Config {
	g := gw("tls", "203.0.113.30", 443, model.TLS)
	g.Listeners[0].Passthrough = []model.SNITarget{
		{ServerNames: []string{"db.example.com", "*.db.example.com"}, Targets: []model.WeightedCluster{{Cluster: "a/u", Weight: 1}, {Cluster: "a/v", Weight: 0}}},
		{Targets: []model.WeightedCluster{{Cluster: "a/v"}}},
	}
	s := svc("a", "a.example.com", "/")
	s.Upstreams = append(s.Upstreams, model.Upstream{Name: "v"})
	return model.Config{Gateways: []model.Gateway{g}, Services: []model.Service{s}}
}

func TestCheckPassthroughListeners(t *testing.T) {
	r := model.Resolve(passthroughConfig(), model.Options{})
	if len(r.Problems) > 0 || len(r.Listeners) != 1 {
		t.Fatalf("valid passthrough gateway: problems %v, listeners %d", r.Problems, len(r.Listeners))
	}
	if el := r.Listeners[0]; el.Protocol != model.TLS || len(el.Passthrough) != 2 || el.Passthrough[0].ServerNames[0] != "db.example.com" || len(el.Passthrough[1].ServerNames) != 0 {
		t.Fatalf("listener %+v: want both entries, the one without names last", el)
	}
	for name, tc := range map[string]struct {
		edit  func(l *model.Listener, c *model.Config)
		field string
	}{
		"no entries": {func(l *model.Listener, _ *model.Config) { l.Passthrough = nil }, "listeners[0].passthrough"},
		"certificates": {func(l *model.Listener, _ *model.Config) {
			l.TLS = []model.SNICertificate{{ServerNames: []string{"x.example.com"}, Certificate: "c"}}
		}, "listeners[0].certificates"},
		"tcp target":               {func(l *model.Listener, _ *model.Config) { l.Target = "a/u" }, "listeners[0].target"},
		"bad server name":          {func(l *model.Listener, _ *model.Config) { l.Passthrough[0].ServerNames[1] = "db.*.com" }, "listeners[0].passthrough[0].serverNames[1]"},
		"duplicate name":           {func(l *model.Listener, _ *model.Config) { l.Passthrough[1].ServerNames = []string{"db.example.com"} }, "listeners[0].passthrough[1].serverNames[0]"},
		"two catch-alls":           {func(l *model.Listener, _ *model.Config) { l.Passthrough[0].ServerNames = nil }, "only one entry may take every server name"},
		"no targets":               {func(l *model.Listener, _ *model.Config) { l.Passthrough[1].Targets = nil }, "listeners[0].passthrough[1].targets"},
		"all weights zero":         {func(l *model.Listener, _ *model.Config) { l.Passthrough[0].Targets[0].Weight = 0 }, "every target has weight 0"},
		"not a cluster name":       {func(l *model.Listener, _ *model.Config) { l.Passthrough[1].Targets[0].Cluster = "v" }, "listeners[0].passthrough[1].targets[0].cluster"},
		"unknown cluster":          {func(l *model.Listener, _ *model.Config) { l.Passthrough[1].Targets[0].Cluster = "a/nope" }, "listeners[0].passthrough[1].targets[0].cluster"},
		"cluster of another group": {func(_ *model.Listener, c *model.Config) { c.Services[0].Group = "other" }, "no upstream \"a/u\" (service/upstream) in group \"edge\""},
		"passthrough on HTTP":      {func(l *model.Listener, _ *model.Config) { l.Protocol = model.HTTP }, "listeners[0].passthrough"},
	} {
		t.Run(name, func(t *testing.T) {
			c := passthroughConfig()
			tc.edit(&c.Gateways[0].Listeners[0], &c)
			r := model.Resolve(c, model.Options{})
			if len(r.Config.Gateways) != 0 {
				t.Errorf("gateway accepted")
			}
			var msgs []string
			for _, p := range r.Problems {
				msgs = append(msgs, p.Error())
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tc.field) {
				t.Fatalf("problems %v, want one naming %q", msgs, tc.field)
			}
		})
	}
}

// TestTLSListenerServesNoRoutes: a service naming a TLS listener is not
// served there, and says why.
func TestTLSListenerServesNoRoutes(t *testing.T) {
	c := passthroughConfig()
	c.Services[0].Listeners = []model.ListenerRef{{Gateway: "tls", Listener: "l"}}
	r := model.Resolve(c, model.Options{})
	if len(r.Listeners) != 1 || len(r.Listeners[0].Services) != 0 {
		t.Fatalf("listeners %+v: the TLS listener must serve no service", r.Listeners)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Error(), "is TLS") {
		t.Fatalf("problems %v", r.Problems)
	}
}

// TestExactAndMethodRoutesAreDistinct: the same path as exact and as
// prefix, or with another method or query, is not a duplicate route; the
// same match twice is.
func TestExactAndMethodRoutesAreDistinct(t *testing.T) {
	a := svc("a", "x.example.com", "/p")
	b := svc("b", "x.example.com", "")
	b.Namespace = a.Namespace
	b.Routes[0].Prefix, b.Routes[0].Exact = "", "/p"
	c := svc("c", "x.example.com", "/p")
	c.Routes[0].Method = "POST"
	d := svc("d", "x.example.com", "/p")
	d.Routes[0].Queries = []model.QueryMatch{{Name: "q", Exact: "1"}}
	e := svc("e", "x.example.com", "/p")
	e.Routes[0].Method = "POST"
	r := model.Resolve(model.Config{Services: []model.Service{a, b, c, d, e}}, model.Options{})
	got := names(r.Config.Services, func(s model.Service) string { return s.Name })
	if got != "a,b,c,d" {
		t.Fatalf("accepted %s, want a,b,c,d (e repeats c's match)", got)
	}
}
