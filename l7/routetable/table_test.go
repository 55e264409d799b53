package routetable

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
)

// publish hands cfg to t as the pipeline does, with the resolve's problems.
func publish(t *Table, cfg model.Config, problems ...model.Problem) {
	t.Consume(context.Background(), pipeline.Change{Config: cfg}, &pipeline.Report{Problems: problems})
}

func routesConfig() model.Config {
	vip := netip.MustParseAddr("203.0.113.10")
	return model.Config{
		Gateways: []model.Gateway{{Name: "edge", Group: "edge", Origin: "gateways.tlb", Listeners: []model.Listener{
			{Name: "https", VIP: vip, Port: 443, Protocol: model.HTTPS},
			{Name: "http", VIP: vip, Port: 80, Protocol: model.HTTP},
		}}},
		Services: []model.Service{
			{Name: "shop", Origin: "shop.tlb", Hosts: []string{"shop.example.com"},
				Listeners: []model.ListenerRef{{Gateway: "edge", Listener: "https"}},
				Routes: []model.Route{
					{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "web", Weight: 90}, {Upstream: "canary", Weight: 10}}},
					{Exact: "/healthz", Method: "GET", Targets: []model.WeightedTarget{{Upstream: "web", Weight: 1}}},
				},
				Upstreams: []model.Upstream{{Name: "web", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort("10.0.0.1:8080")}}}, {Name: "canary"}}},
			{Name: "web", Namespace: "shop", Origin: "shop/web", Hosts: []string{"www.example.com"},
				Listeners: []model.ListenerRef{{Gateway: "edge", Listener: "http"}},
				Routes:    []model.Route{{Prefix: "/api", Redirect: &model.Redirect{Scheme: "https"}}}},
			{Name: "bad", Namespace: "shop", Origin: "shop/bad", Hosts: []string{"bad.example.com"},
				Listeners: []model.ListenerRef{{Gateway: "edge", Listener: "http"}},
				Routes:    []model.Route{{Prefix: "/"}}},
		},
		Certificates: []model.Certificate{{Name: "shop", Key: model.NewPrivateKey([]byte("KEY-MATERIAL-NEVER-SHOWN"))}},
	}
}

func TestRouteTableServesWhatWasPublished(t *testing.T) {
	table := New("edge")
	rejected := model.Problem{Kind: "service", Name: "bad", Origin: "shop/bad", Rejected: true}
	publish(table, routesConfig(), rejected)

	rec := httptest.NewRecorder()
	table.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/routes", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /routes: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if strings.Contains(rec.Body.String(), "KEY-MATERIAL") {
		t.Error("/routes shows key material")
	}
	var got api.Routes
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := api.Routes{Group: "edge", Routes: []api.RouteRow{
		{Gateway: "edge", Listener: "http", VIP: "203.0.113.10", Port: 80, Protocol: "HTTP", Host: "www.example.com", Match: "prefix", Path: "/api",
			Service: "web", Namespace: "shop", Origin: "shop/web", Source: "kubernetes", Redirect: true},
		{Gateway: "edge", Listener: "https", VIP: "203.0.113.10", Port: 443, Protocol: "HTTPS", Host: "shop.example.com", Match: "prefix", Path: "/",
			Service: "shop", Origin: "shop.tlb", Source: "dsl", Upstreams: []api.RouteUpstream{{Name: "web", Weight: 90, Endpoints: []string{"10.0.0.1:8080"}}, {Name: "canary", Weight: 10}}},
		{Gateway: "edge", Listener: "https", VIP: "203.0.113.10", Port: 443, Protocol: "HTTPS", Host: "shop.example.com", Match: "exact", Path: "/healthz", Method: "GET",
			Service: "shop", Origin: "shop.tlb", Source: "dsl", Upstreams: []api.RouteUpstream{{Name: "web", Weight: 1, Endpoints: []string{"10.0.0.1:8080"}}}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GET /routes\n got %+v\nwant %+v", got, want)
	}

	// A later publication replaces the table.
	publish(table, model.Config{})
	rec = httptest.NewRecorder()
	table.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/routes", nil))
	if body := strings.TrimSpace(rec.Body.String()); body != `{"group":"edge","routes":[]}` {
		t.Errorf("after an empty config: %s", body)
	}
	rec = httptest.NewRecorder()
	table.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/routes", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /routes: %d, want 405", rec.Code)
	}
}
