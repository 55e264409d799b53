package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeAPI returns st, or err when set.
type fakeAPI struct {
	st  APIState
	err error
}

func (f fakeAPI) ReadAPI(context.Context) (APIState, error) { return f.st, f.err }

// fakeComponents returns cs as they are.
type fakeComponents []Component

func (f fakeComponents) ListEndpoints(context.Context) ([]Endpoint, error) {
	eps := make([]Endpoint, 0, len(f))
	for _, c := range f {
		eps = append(eps, Endpoint{Role: c.Role, Name: c.Name, URL: c.URL})
	}
	return eps, nil
}

func (f fakeComponents) ReadComponent(_ context.Context, ep Endpoint) Component {
	for _, c := range f {
		if c.Role == ep.Role && c.Name == ep.Name {
			return c
		}
	}
	return Component{Role: ep.Role, Name: ep.Name, Err: "no such fake"}
}

var errAPIDown = errors.New("dial tcp 10.96.0.1:443: connect: connection refused")

// testState is a small fleet: one environment, one cluster, one pool, a
// Service with an L7 route and a TLS Secret, a warning Event and a Lease.
func testState() APIState {
	return APIState{
		Pools:    []Pool{{Name: "prod-a", CIDRs: []string{"203.0.113.0/28"}, L4Cluster: "tlb-1", Used: 2, Free: 12}},
		Clusters: []L4Cluster{{Name: "tlb-1", Environment: "production", Capacity: 1000, Used: 2, Free: 12}},
		Services: []Service{
			{Namespace: "shop", Name: "web", VIPs: []string{"203.0.113.10"}, Pool: "prod-a", L4Cluster: "tlb-1", Ports: []string{"443/tcp"},
				Requested: "environment=production", L7: &L7Intent{Group: "edge", Hosts: []string{"shop.example.com"}, PathPrefix: "/", TLSSecret: "shop-tls"}},
			{Namespace: "db", Name: "pg", VIPs: []string{"203.0.113.11"}, Pool: "prod-a", L4Cluster: "tlb-1", Ports: []string{"5432/tcp"}},
		},
		Events: []Event{{Namespace: "shop", Kind: "Service", Name: "bad", Reason: "InvalidAnnotation", Message: `annotation tlb.io/vip: "x" is not a unicast IP address`, Count: 3,
			Last: time.Unix(1700000000, 0)}},
		Leases:            []Lease{{Namespace: "tlb-system", Name: "tlb-ipam", Holder: "tlb-ipam-7c9", Renewed: time.Unix(1700000000, 0)}},
		GatewaysInstalled: false,
	}
}

// testComponents are two directors (one with a session down), a netd and
// an l7 server.
func testComponents() []Component {
	return []Component{
		{Role: RoleDirector, Name: "dir-1", URL: "http://198.18.1.2:9100", Ready: true, Announced: 1,
			Sessions:    []BGPSession{{Peer: "198.18.1.1", Established: true}},
			RealServers: []RealServer{{Address: "198.18.2.2", Up: true}, {Address: "198.18.2.3", Up: false}},
			GTM: map[string]GTMAnswer{
				"203.0.113.10": {Up: true, Line: "203.0.113.10 up healthy=1 total=2"},
				"203.0.113.11": {Up: false, Line: "203.0.113.11 down healthy=0 total=2: no healthy gateway"},
			},
			Traffic: map[string][]Sample{"203.0.113.10": {{Metric: "connections_total", Labels: "port=443 protocol=tcp", Value: 12345}}}},
		{Role: RoleDirector, Name: "dir-2", URL: "http://198.18.1.3:9100", Ready: false, ReadyReason: "no BGP session established",
			Sessions: []BGPSession{{Peer: "198.18.1.1", Established: false}},
			GTM:      map[string]GTMAnswer{"203.0.113.10": {Up: true, Line: "203.0.113.10 up healthy=1 total=2"}}},
		{Role: RoleNetd, Name: "gw-a", URL: "http://198.18.2.2:9101", Ready: true, VIPsBound: 1, Bound: []string{"203.0.113.10"}},
		{Role: RoleL7, Name: "edge-a", URL: "http://198.18.2.2:9480", Ready: true,
			Certificates: []Certificate{{Name: "shop.web.shop-tls", DaysLeft: 9.5}},
			NACKs:        []Sample{{Metric: metricNACKs, Labels: "group=edge type=listener", Value: 2}}},
	}
}

// get serves one request to a console over sources and returns the
// status and body.
func get(t *testing.T, api APISource, comps ComponentSource, path string) (int, string) {
	t.Helper()
	return getWith(t, &Collector{API: api, Components: comps, Timeout: 5 * time.Second, Now: func() time.Time { return time.Unix(1700000100, 0) }}, path)
}

// getWith serves one request to a console over col.
func getWith(t *testing.T, col *Collector, path string) (int, string) {
	t.Helper()
	h, err := NewHandler(col, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusBadRequest && ct != "text/html; charset=utf-8" {
		t.Errorf("GET %s: Content-Type %q", path, ct)
	}
	return rec.Code, rec.Body.String()
}

// panel returns the HTML of the section with id in page.
func panel(t *testing.T, page, id string) string {
	t.Helper()
	start := strings.Index(page, fmt.Sprintf(`<section class="panel" id="%s">`, id))
	if start < 0 {
		t.Fatalf("no panel %q in page", id)
	}
	end := strings.Index(page[start:], "</section>")
	return page[start : start+end]
}

// component returns the HTML of one component's block.
func component(t *testing.T, page, name string) string {
	t.Helper()
	start := strings.Index(page, fmt.Sprintf(`data-name="%s">`, name))
	if start < 0 {
		t.Fatalf("no component %q in page", name)
	}
	end := strings.Index(page[start:], "</div>\n")
	return page[start : start+end]
}

func httptestRecorder(h http.Handler, method, path string) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Code
}
