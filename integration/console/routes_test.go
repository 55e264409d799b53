package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/internal/console"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/routetable"
)

// TestRoutesOfEverySource: an l7 server fed by its DSL files and by the
// API server (a Service's annotations, a Gateway API HTTPRoute) lists
// the routes of all of them on /routes, as its pipeline merges them
// (pipeline.Union, what the Merger publishes), and the console shows
// every one on the VIP with where it comes from.
func TestRoutesOfEverySource(t *testing.T) {
	vip := netip.MustParseAddr("203.0.113.10")
	gw := model.Gateway{Name: "edge", Listeners: []model.Listener{{Name: "https", VIP: vip, Port: 443, Protocol: model.HTTPS}}}
	svc := func(ns, name string, origin model.Origin, host, prefix string) model.Service {
		return model.Service{Namespace: ns, Name: name, Origin: origin, Hosts: []string{host},
			Listeners: []model.ListenerRef{{Gateway: "edge", Listener: "https"}},
			Routes:    []model.Route{{Prefix: prefix, Targets: []model.WeightedTarget{{Upstream: "web", Weight: 1}}}},
			Upstreams: []model.Upstream{{Name: "web", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort("10.0.0.1:8080")}}}}}
	}
	merged := pipeline.Union(map[string]model.Config{
		"dsl": {Gateways: []model.Gateway{gw}, Services: []model.Service{svc(model.Operator, "shop", "shop.tlb", "shop.example.com", "/")}},
		"kubernetes": {Services: []model.Service{
			svc("media", "files", "media/files", "media.example.com", "/"),
			svc("api", "v1", "httproute api/v1", "api.example.com", "/v1"),
		}},
	})
	table := routetable.New("edge")
	table.Set(merged, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ready\n")) })
	mux.HandleFunc("/metrics", func(http.ResponseWriter, *http.Request) {})
	mux.Handle("/routes", table)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	col := &console.Collector{Components: console.HTTPComponents{Endpoints: []console.Endpoint{{Role: console.RoleL7, Name: "edge-a", URL: hs.URL}}}}
	var b strings.Builder
	if err := console.WriteText(&b, console.BuildView(col.Collect(context.Background()))); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"route 443 api.example.com/v1 (prefix v1) -> web (10.0.0.1:8080) [kubernetes, on edge-a]",
		"route 443 media.example.com/ (prefix files) -> web (10.0.0.1:8080) [kubernetes, on edge-a]",
		"route 443 shop.example.com/ (prefix shop) -> web (10.0.0.1:8080) [dsl, on edge-a]",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
