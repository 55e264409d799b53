package ratelimitconfig_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/ratelimitconfig"
)

type recordedConfigs struct{ got []ratelimit.ServiceConfig }

func (r *recordedConfigs) Set(_ context.Context, cfgs ...ratelimit.ServiceConfig) (bool, error) {
	r.got = append(r.got, cfgs...)
	return true, nil
}

// consume hands c to p as the pipeline does, after an xDS consumer that
// reported rep.
func consume(p *ratelimitconfig.Consumer, c pipeline.Change, rep pipeline.Report) {
	if c.Resolved == nil {
		r := model.Resolve(c.Config, model.Options{})
		c.Resolved = &r
	}
	p.Consume(context.Background(), c, &rep)
}

func parseConfig(t *testing.T, docs ...string) model.Config {
	t.Helper()
	var cfg model.Config
	for i, src := range docs {
		d, err := dsl.Parse(string(rune('a'+i))+".yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if d.Service != nil {
			cfg.Services = append(cfg.Services, *d.Service)
		}
		if d.Gateway != nil {
			cfg.Gateways = append(cfg.Gateways, *d.Gateway)
		}
	}
	return cfg
}

const limitedShop = `kind: gateway/service/v1
name: shop
group: edge
hosts: [shop.example.com]
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
rateLimit: {global: {perRoute: {requests: 50, unit: second}}}
routes:
  - {name: cart, prefix: /cart, target: u, rateLimit: {global: {perClientIP: {requests: 3, unit: hour}}}}
  - {name: local, prefix: /local, target: u, rateLimit: {local: {requestsPerSecond: 1, burst: 1}}}
  - {prefix: /, target: u}
`

const otherGroup = `kind: gateway/service/v1
name: blog
group: other
hosts: [blog.example.com]
upstreams: [{name: u, endpoints: ["198.51.100.2:80"]}]
routes:
  - {name: all, prefix: /, target: u, rateLimit: {global: {perRoute: {requests: 1, unit: minute}}}}
`

// TestGroupRateLimits: the service's configuration holds the group's
// routes with a global limit (own or inherited), under their route
// identifiers, and nothing of another group or of a local-only route.
func TestGroupRateLimits(t *testing.T) {
	cfg := parseConfig(t, limitedShop, otherGroup)
	got, err := model.GroupRateLimits(model.Resolve(cfg, model.Options{}), "edge")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range got.Descriptors {
		names = append(names, d.Value)
	}
	if got.Domain != "edge" || len(names) != 2 || names[0] != "shop/2" || names[1] != "shop/cart" {
		t.Fatalf("config = %+v, want domain edge with shop/2 (inherited) and shop/cart", got)
	}
	if got.Descriptors[0].RateLimit == nil || got.Descriptors[0].RateLimit.RequestsPerUnit != 50 || got.Descriptors[1].Descriptors[0].RateLimit.RequestsPerUnit != 3 {
		t.Errorf("limits = %+v", got.Descriptors)
	}
}

// TestConsumerKeepsLastGood: when the gateways' resources fail
// validation (they keep their last good set), the rate limit service is
// not given the new limits either.
func TestConsumerKeepsLastGood(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := parseConfig(t, limitedShop)
	rec := &recordedConfigs{}
	p := &ratelimitconfig.Consumer{Group: "edge", Configs: rec, Log: log}
	consume(p, pipeline.Change{Config: cfg}, pipeline.Report{})
	if len(rec.got) != 1 || rec.got[0].Domain != "edge" {
		t.Fatalf("published %+v, want edge's limits", rec.got)
	}
	consume(p, pipeline.Change{Config: cfg}, pipeline.Report{Invalid: map[string]error{"gateway/edge": errors.New("invalid")}})
	if len(rec.got) != 1 {
		t.Fatalf("limits published despite invalid gateway resources: %+v", rec.got)
	}
}

// TestConsumerTakesThePipelinesResolvedConfig: the rate limit service
// gets the limits of the config the pipeline resolved (Change.Resolved),
// not of a second resolve of its own: here the change's resolved config
// lacks the shop, and so do the limits.
func TestConsumerTakesThePipelinesResolvedConfig(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := parseConfig(t, limitedShop, otherGroup)
	resolved := model.Resolve(parseConfig(t, otherGroup), model.Options{})
	rec := &recordedConfigs{}
	p := &ratelimitconfig.Consumer{Group: "edge", Configs: rec, Log: log}
	consume(p, pipeline.Change{Config: cfg, Resolved: &resolved}, pipeline.Report{})
	if len(rec.got) != 1 || len(rec.got[0].Descriptors) != 0 {
		t.Fatalf("published %+v; want no limits: the resolved config has no service of edge", rec.got)
	}
}
