package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/internal/poll"
)

// scopeApps: on the public listener, service app has one route with an
// interceptor and one without, service other (another host) has none; the
// inner listener, on another VIP, serves only a service without any.
const scopeApps = `kind: gateway/service/v1
name: app
group: edge
hosts: [app.example.com]
listeners: [public/web]
upstreams:
  - {name: main, endpoints: ["$BACKEND"]}
routes:
  - name: guarded
    prefix: /guarded
    target: main
    interceptors: [{type: cspInterceptor, policy: "default-src 'self'"}]
  - {name: open, prefix: /, target: main}
`

const scopeOther = `kind: gateway/service/v1
name: other
group: edge
hosts: [other.example.com]
listeners: [public/web]
upstreams:
  - {name: main, endpoints: ["$BACKEND"]}
routes:
  - {name: all, prefix: /, target: main}
`

const scopeInner = `kind: gateway/gateway/v1
name: inner
group: edge
listeners:
  - {name: web, vip: $INNERVIP, port: $PORT, protocol: HTTP}
`

const scopeInnerApp = `kind: gateway/service/v1
name: inner-app
group: edge
hosts: [inner.example.com]
listeners: [inner/web]
upstreams:
  - {name: main, endpoints: ["$BACKEND"]}
routes:
  - {name: all, prefix: /, target: main}
`

// TestInterceptorsOnlyWhereListed: Envoy calls l7's authorization service
// for the routes that list interceptors and for no other: not for a
// sibling route of the same service, not for another service of the same
// listener, and a listener without such routes has no ext_authz filter at
// all. Counted on both sides: l7's checks and Envoy's requests to the
// authorization cluster. With l7 gone, the routes with interceptors fail
// closed (503) and the others keep working.
func TestInterceptorsOnlyWhereListed(t *testing.T) {
	const innerVIP = "127.0.22.120"
	s := startSite(t, siteOptions{hostIP: "127.0.22.6", vars: map[string]string{"$INNERVIP": innerVIP},
		files: map[string]string{"app.yaml": scopeApps, "other.yaml": scopeOther, "inner.yaml": scopeInner, "inner-app.yaml": scopeInnerApp}})
	inner := fmt.Sprintf("%s:%d", innerVIP, listenerPort)
	poll.Until(t, time.Minute, "the inner listener accepts requests", func() bool {
		return clientOf(t, inner, "").do(req{path: "/", headers: map[string]string{"host": "inner.example.com"}}).status == 200
	})
	authzCalls := func(t *testing.T) int64 { return s.envoyStat(t, "cluster.tlb-l7-authz.upstream_rq_total") }

	cases := []struct {
		name   string
		vip    string
		path   string
		host   string
		called bool
	}{
		{name: "route with an interceptor", vip: s.vip, path: "/guarded/x", called: true},
		{name: "sibling route of the same service", vip: s.vip, path: "/open"},
		{name: "another service of the listener", vip: s.vip, path: "/guarded/x", host: "other.example.com"},
		{name: "a listener without interceptors", vip: inner, path: "/guarded/x", host: "inner.example.com"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.host != "" {
				h["host"] = tc.host
			}
			const n = 5
			checks, calls := s.authzChecks(t), authzCalls(t)
			for range n {
				r := clientOf(t, tc.vip, "").do(req{path: tc.path, headers: h})
				if r.status != 200 || r.backend == nil {
					t.Fatalf("%s: %d %q", tc.path, r.status, r.body)
				}
				if got := r.header.Get("Content-Security-Policy") != ""; got != tc.called {
					t.Errorf("Content-Security-Policy present: %v, want %v", got, tc.called)
				}
			}
			want := map[bool]int64{true: n, false: 0}[tc.called]
			if got := int64(s.authzChecks(t) - checks); got != want {
				t.Errorf("l7 answered %d checks for %d requests, want %d", got, n, want)
			}
			if got := authzCalls(t) - calls; got != want {
				t.Errorf("envoy sent %d requests to tlb-l7-authz for %d requests, want %d", got, n, want)
			}
		})
	}

	t.Run("no ext_authz filter on a listener without interceptors", func(t *testing.T) {
		filters := listenerHTTPFilters(t, s, fmt.Sprintf("http-%s-%d", innerVIP, listenerPort))
		if strings.Join(filters, ",") != "envoy.filters.http.router" {
			t.Errorf("the inner listener runs %v, want the router alone", filters)
		}
		public := listenerHTTPFilters(t, s, "http-"+strings.Replace(s.vip, ":", "-", 1))
		if strings.Join(public, ",") != "envoy.filters.http.ext_authz,envoy.filters.http.router" {
			t.Errorf("the public listener runs %v, want ext_authz then the router", public)
		}
	})

	t.Run("l7 gone: interceptor routes fail closed, others pass", func(t *testing.T) {
		if err := s.gw.L7Cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, time.Minute, "l7 has exited", func() bool { done, _ := s.gw.Exited(s.gw.L7Cmd); return done })
		before := s.backend.count("/guarded/x")
		if r := s.client(t, "").do(req{path: "/guarded/x"}); r.status != 503 || r.backend != nil {
			t.Errorf("/guarded with l7 gone: %d %q, want Envoy's 503", r.status, r.body)
		}
		if s.backend.count("/guarded/x") != before {
			t.Error("the request reached the backend unchecked")
		}
		if r := s.client(t, "").do(req{path: "/open"}); r.status != 200 || r.backend == nil {
			t.Errorf("/open with l7 gone: %d %q, want the backend's 200", r.status, r.body)
		}
	})
}

// listenerHTTPFilters returns the HTTP filters of a listener's connection
// manager, from Envoy's config dump.
func listenerHTTPFilters(t *testing.T, s *site, name string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code, body, err := s.gw.AdminGet(ctx, "/config_dump?resource=dynamic_listeners&name_regex="+name)
	if err != nil || code != 200 {
		t.Fatalf("config_dump: %d %v", code, err)
	}
	var dump struct {
		Configs []struct {
			ActiveState struct {
				Listener struct {
					FilterChains []struct {
						Filters []struct {
							TypedConfig struct {
								HTTPFilters []struct {
									Name string `json:"name"`
								} `json:"http_filters"`
							} `json:"typed_config"`
						} `json:"filters"`
					} `json:"filter_chains"`
				} `json:"listener"`
			} `json:"active_state"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(body, &dump); err != nil {
		t.Fatal(err)
	}
	if len(dump.Configs) != 1 || len(dump.Configs[0].ActiveState.Listener.FilterChains) == 0 {
		t.Fatalf("listener %s not in the config dump: %s", name, body)
	}
	var out []string
	for _, f := range dump.Configs[0].ActiveState.Listener.FilterChains[0].Filters[0].TypedConfig.HTTPFilters {
		out = append(out, f.Name)
	}
	return out
}
