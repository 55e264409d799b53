package translate_test

import (
	"slices"
	"strings"
	"testing"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	ratelimitfilter "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/translate/ratelimitenvoy"
	"github.com/tlbproject/tlb/l7/validate"
)

// globalApp limits app/api per client IP and per route, locally too;
// app/free has no limit.
var globalApp = strings.Replace(rateLimitApp, "{local: {requestsPerSecond: 0.5, burst: 3}}",
	"{local: {requestsPerSecond: 0.5, burst: 3}, global: {perClientIP: {requests: 5, unit: minute}, perRoute: {requests: 100, unit: hour}}}", 1)

var rlService = &model.RateLimitService{Host: "ratelimit.tlb-system.svc", Port: 8081}

// resolveWith parses docs and resolves them with opts.
func resolveWith(t *testing.T, opts model.Options, docs ...string) model.Resolved {
	t.Helper()
	return resolve(t, parseDocs(t, docs...), opts)
}

func clustersByName(t *testing.T, r model.Resolved) map[string]*cluster.Cluster {
	t.Helper()
	set := translate.Group(r, "g", translate.Gateway)
	if err := validate.Set(set); err != nil {
		t.Fatalf("ValidateAll: %v", err)
	}
	out := map[string]*cluster.Cluster{}
	for _, c := range set[resource.ClusterType] {
		out[c.(*cluster.Cluster).GetName()] = c.(*cluster.Cluster)
	}
	return out
}

// TestGlobalRateLimitOnlyWhereAsked: with a rate limit service, the
// listener whose route has a global limit runs the ratelimit filter (domain:
// the group) after local_ratelimit; only that route sends descriptors,
// keyed by its route identifier; the group gets the ratelimit cluster over
// HTTP/2; the other listener and routes are what they were without the
// limit, and there is no problem left.
func TestGlobalRateLimitOnlyWhereAsked(t *testing.T) {
	r := resolveWith(t, model.Options{RateLimitService: rlService}, filtersGateway, globalApp, filtersPlain)
	if len(r.Problems) != 0 {
		t.Fatalf("problems = %v, want none with a rate limit service", r.Problems)
	}
	hcms, rcs := gatewaySet(t, r)
	want := []string{translate.LocalRateLimitFilter, translate.GlobalRateLimitFilter, "envoy.filters.http.router"}
	if got := filterNames(hcms["http-203.0.113.1-80"]); !slices.Equal(got, want) {
		t.Fatalf("guarded filters = %v, want %v", got, want)
	}
	var rl ratelimitfilter.RateLimit
	if err := hcms["http-203.0.113.1-80"].GetHttpFilters()[1].GetTypedConfig().UnmarshalTo(&rl); err != nil {
		t.Fatal(err)
	}
	if rl.GetDomain() != "g" || rl.GetRateLimitService().GetGrpcService().GetEnvoyGrpc().GetClusterName() != translate.RateLimitCluster || rl.GetFailureModeDeny() {
		t.Errorf("ratelimit filter = %v, want domain g, cluster %s, fail open", &rl, translate.RateLimitCluster)
	}
	if got := filterNames(hcms["http-203.0.113.2-80"]); !slices.Equal(got, []string{"envoy.filters.http.router"}) {
		t.Errorf("open filters = %v", got)
	}

	g := routesByName(rcs["http-203.0.113.1-80"])
	gen := func(k, v string) *route.RateLimit_Action {
		return &route.RateLimit_Action{ActionSpecifier: &route.RateLimit_Action_GenericKey_{GenericKey: &route.RateLimit_Action_GenericKey{DescriptorKey: k, DescriptorValue: v}}}
	}
	wantActions := []*route.RateLimit{
		{Actions: []*route.RateLimit_Action{gen("route", "app/api")}},
		{Actions: []*route.RateLimit_Action{gen("route", "app/api"), {ActionSpecifier: &route.RateLimit_Action_RemoteAddress_{RemoteAddress: &route.RateLimit_Action_RemoteAddress{}}}}},
	}
	got := g["app/api"].GetRoute().GetRateLimits()
	if len(got) != len(wantActions) {
		t.Fatalf("app/api rate_limits = %v, want %v", got, wantActions)
	}
	for i := range got {
		if !proto.Equal(got[i], wantActions[i]) {
			t.Errorf("app/api rate_limits[%d] = %v, want %v", i, got[i], wantActions[i])
		}
	}
	for _, name := range []string{"app/free", "plain/all"} {
		if rls := g[name].GetRoute().GetRateLimits(); len(rls) != 0 {
			t.Errorf("%s has rate limit actions: %v", name, rls)
		}
	}
	// The routes of the open listener are those of a config without limits.
	_, bare := gatewaySet(t, resolveWith(t, model.Options{RateLimitService: rlService}, filtersGateway, rateLimitAppBare, filtersPlain))
	if !proto.Equal(rcs["http-203.0.113.2-80"], bare["http-203.0.113.2-80"]) {
		t.Error("the open listener's routes changed")
	}

	cs := clustersByName(t, r)
	c := cs[translate.RateLimitCluster]
	if c == nil {
		t.Fatalf("no %s cluster among %v", translate.RateLimitCluster, slices.Sorted(func(yield func(string) bool) {
			for n := range cs {
				if !yield(n) {
					return
				}
			}
		}))
	}
	if !proto.Equal(c, ratelimitenvoy.Cluster("ratelimit.tlb-system.svc", 8081)) {
		t.Errorf("ratelimit cluster = %v", c)
	}
	// Proxyless gRPC clients run no rate limit filter: no cluster for them.
	for _, res := range translate.Group(r, "g", translate.GRPC)[resource.ClusterType] {
		if res.(*cluster.Cluster).GetName() == translate.RateLimitCluster {
			t.Error("proxyless gRPC clients get the ratelimit cluster")
		}
	}
}

// TestGlobalRateLimitAbsent: the filter, the actions and the cluster are
// absent without the operator's rate limit service (the limit is then a
// kept problem), and with a service when no route asks for a global limit.
func TestGlobalRateLimitAbsent(t *testing.T) {
	for name, r := range map[string]model.Resolved{
		"no service":      resolveWith(t, model.Options{}, filtersGateway, globalApp, filtersPlain),
		"no global limit": resolveWith(t, model.Options{RateLimitService: rlService}, filtersGateway, rateLimitApp, filtersPlain),
	} {
		t.Run(name, func(t *testing.T) {
			hcms, rcs := gatewaySet(t, r)
			for l, m := range hcms {
				if slices.Contains(filterNames(m), translate.GlobalRateLimitFilter) {
					t.Errorf("%s runs the ratelimit filter", l)
				}
			}
			for l, rc := range rcs {
				for n, rt := range routesByName(rc) {
					if len(rt.GetRoute().GetRateLimits()) != 0 {
						t.Errorf("%s %s has rate limit actions", l, n)
					}
				}
			}
			if _, ok := clustersByName(t, r)[translate.RateLimitCluster]; ok {
				t.Error("the ratelimit cluster is emitted")
			}
		})
	}
	r := resolveWith(t, model.Options{}, filtersGateway, globalApp, filtersPlain)
	if len(r.Problems) != 1 || r.Problems[0].Rejected || r.Problems[0].Field != "routes[0].rateLimit.global" {
		t.Errorf("problems without a service = %v, want one kept on routes[0].rateLimit.global", r.Problems)
	}
}

// TestGlobalRateLimitCacheFollowsTheService: a cached translation follows
// the operator's service (set, moved) like a fresh one.
func TestGlobalRateLimitCacheFollowsTheService(t *testing.T) {
	c := translate.NewCache()
	for _, svc := range []*model.RateLimitService{nil, rlService, {Host: "10.0.0.9", Port: 9000}, nil} {
		r := resolveWith(t, model.Options{RateLimitService: svc}, filtersGateway, globalApp, filtersPlain)
		fresh := translate.Group(r, "g", translate.Gateway)
		cached := c.ForKind(r, "g", translate.Gateway, c.Shared(r, "g"))
		c.Sweep()
		for typ := range fresh {
			if len(fresh[typ]) != len(cached[typ]) {
				t.Fatalf("service %v, %s: cache built %d, plain %d", svc, typ, len(cached[typ]), len(fresh[typ]))
			}
			for i := range fresh[typ] {
				if !proto.Equal(fresh[typ][i], cached[typ][i]) {
					t.Errorf("service %v, %s[%d]: the cache builds something else", svc, typ, i)
				}
			}
		}
	}
}

func TestParseRateLimitService(t *testing.T) {
	for in, ok := range map[string]bool{
		"ratelimit.tlb-system.svc:8081": true, "10.0.0.1:8081": true, "[fd00::1]:8081": true,
		"ratelimit": false, "ratelimit:0": false, "ratelimit:70000": false, ":8081": false, "*.x:1": false, "Bad_Host:1": false,
	} {
		s, err := model.ParseRateLimitService(in)
		if (err == nil) != ok {
			t.Errorf("ParseRateLimitService(%q) = %v, %v; want ok %v", in, s, err, ok)
		}
	}
}

// TestGlobalRateLimitStaticBootstrap: l7 render's bootstrap keeps the rate
// limit service's cluster as built (DNS, its own endpoint), while the
// services' EDS clusters become static.
func TestGlobalRateLimitStaticBootstrap(t *testing.T) {
	r := resolveWith(t, model.Options{RateLimitService: rlService}, filtersGateway, globalApp, filtersPlain)
	b, err := translate.StaticBootstrap(translate.Group(r, "g", translate.Gateway))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range b.GetStaticResources().GetClusters() {
		switch c.GetName() {
		case translate.RateLimitCluster:
			found = true
			if !proto.Equal(c, ratelimitenvoy.Cluster("ratelimit.tlb-system.svc", 8081)) {
				t.Errorf("bootstrap ratelimit cluster = %v", c)
			}
		default:
			if c.GetType() != cluster.Cluster_STATIC {
				t.Errorf("cluster %s is %v, want STATIC", c.GetName(), c.GetType())
			}
		}
	}
	if !found {
		t.Error("no ratelimit cluster in the bootstrap")
	}
}
