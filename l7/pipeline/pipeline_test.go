package pipeline_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/certexpiry"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/ratelimitconfig"
	"github.com/tlbproject/tlb/l7/routetable"
	"github.com/tlbproject/tlb/l7/xds"
	"github.com/tlbproject/tlb/l7/xdsbuild"
)

// countingResolver counts the resolves it does.
type countingResolver struct {
	inner pipeline.Resolver
	n     int
}

func (c *countingResolver) Resolve(cfg model.Config, opts model.Options) model.Resolved {
	c.n++
	return c.inner.Resolve(cfg, opts)
}

// recordedConfigs stands for the rate limit service's configuration server.
type recordedConfigs struct{ got []ratelimit.ServiceConfig }

func (r *recordedConfigs) Set(_ context.Context, cfgs ...ratelimit.ServiceConfig) (bool, error) {
	r.got = append(r.got, cfgs...)
	return true, nil
}

func limitedConfig(endpoint string) model.Config {
	return model.Config{
		Gateways: []model.Gateway{{Name: "public", Group: "edge", Listeners: []model.Listener{
			{Name: "web", VIP: netip.MustParseAddr("203.0.113.10"), Port: 80, Protocol: model.HTTP}}}},
		Services: []model.Service{{Name: "shop", Group: "edge", Hosts: []string{"shop.example.com"},
			Listeners: []model.ListenerRef{{Gateway: "public", Listener: "web"}},
			RateLimit: &ratelimit.RouteLimits{Global: &ratelimit.Global{PerRoute: &ratelimit.Quota{Requests: 5, Unit: ratelimit.Second}}},
			Upstreams: []model.Upstream{{Name: "u", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort(endpoint), Weight: 1}}}},
			Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "u", Weight: 1}}}}}},
	}
}

// TestOneResolvePerChange: with every consumer l7 serve runs (the xDS
// snapshots, certificate expiry, the route table and the rate limit
// service's configuration), a change is resolved exactly once, and every
// consumer got the change.
func TestOneResolvePerChange(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := xds.New(t.Context(), log, nil, time.Now, xds.Options{Group: "edge"})
	resolver := &countingResolver{inner: model.NewResolver()}
	limits := &recordedConfigs{}
	routes := routetable.New("edge")
	opts := model.Options{RateLimitService: &model.RateLimitService{Host: "ratelimit", Port: 8081}}
	p := pipeline.New(resolver, opts, time.Now,
		xdsbuild.New(srv), certexpiry.New(nil, time.Now), routes,
		&ratelimitconfig.Consumer{Group: "edge", Configs: limits, Log: log})
	for i, ep := range []string{"198.51.100.1:80", "198.51.100.2:80", "198.51.100.3:80"} {
		rep := p.Publish(context.Background(), limitedConfig(ep))
		if len(rep.Problems) > 0 || len(rep.Invalid) > 0 || len(rep.Changed) != 1 {
			t.Fatalf("publish %d: %+v", i, rep)
		}
		if resolver.n != i+1 {
			t.Fatalf("%d resolves after %d changes; want one per change", resolver.n, i+1)
		}
	}
	if len(limits.got) != 3 || len(limits.got[2].Descriptors) != 1 {
		t.Errorf("rate limit configurations %+v; want shop's limit, once per change", limits.got)
	}
	rec := httptest.NewRecorder()
	routes.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/routes", nil))
	if !strings.Contains(rec.Body.String(), "198.51.100.3:80") {
		t.Errorf("route table %s; want the last change's endpoint", rec.Body.String())
	}
}

// TestConsumersRunInOrder: consumers run in the order given, each seeing
// the report as the ones before it left it.
func TestConsumersRunInOrder(t *testing.T) {
	var order []string
	consumer := func(name string) pipeline.Consumer {
		return pipeline.ConsumerFunc(func(_ context.Context, c pipeline.Change, rep *pipeline.Report) {
			if c.Resolved == nil {
				t.Errorf("%s: no resolved model", name)
			}
			order = append(order, name)
			rep.Changed = append(rep.Changed, name)
		})
	}
	p := pipeline.New(model.NewResolver(), model.Options{}, time.Now, consumer("declare"), consumer("xds"), consumer("routes"))
	rep := p.Publish(context.Background(), model.Config{})
	if want := []string{"declare", "xds", "routes"}; !reflect.DeepEqual(order, want) || !reflect.DeepEqual(rep.Changed, want) {
		t.Errorf("ran %v, report %v; want %v", order, rep.Changed, want)
	}
}
