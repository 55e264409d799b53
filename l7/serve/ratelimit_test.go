package serve_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/serve"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
)

type recordedConfigs struct{ got []ratelimit.ServiceConfig }

func (r *recordedConfigs) Set(_ context.Context, cfgs ...ratelimit.ServiceConfig) (bool, error) {
	r.got = append(r.got, cfgs...)
	return true, nil
}

type fixedReport struct{ rep xds.Report }

func (f fixedReport) Publish(context.Context, model.Config) xds.Report { return f.rep }

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
	got, err := serve.GroupRateLimits(model.Resolve(cfg, model.Options{}), "edge")
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

// TestRateLimitPublisherKeepsLastGood: when the gateways' resources fail
// validation (they keep their last good set), the rate limit service is
// not given the new limits either.
func TestRateLimitPublisherKeepsLastGood(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := parseConfig(t, limitedShop)
	rec := &recordedConfigs{}
	ok := &serve.RateLimitPublisher{Next: fixedReport{}, Group: "edge", Configs: rec, Log: log}
	ok.Publish(context.Background(), cfg)
	if len(rec.got) != 1 || rec.got[0].Domain != "edge" {
		t.Fatalf("published %+v, want edge's limits", rec.got)
	}
	bad := &serve.RateLimitPublisher{Next: fixedReport{xds.Report{Invalid: map[string]error{"gateway/edge": errors.New("invalid")}}}, Group: "edge", Configs: rec, Log: log}
	bad.Publish(context.Background(), cfg)
	if len(rec.got) != 1 {
		t.Fatalf("limits published despite invalid gateway resources: %+v", rec.got)
	}
}

// TestRenderRateLimit: l7 render --format ratelimit prints the file form
// of the configuration l7 serves over xDS: the same tree.
func TestRenderRateLimit(t *testing.T) {
	dir := t.TempDir()
	gw := "kind: gateway/gateway/v1\nname: gw\ngroup: edge\nlisteners: [{name: web, vip: 203.0.113.1, port: 80, protocol: HTTP}]\n"
	for name, src := range map[string]string{"gw.yaml": gw, "shop.yaml": limitedShop} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := model.Options{RateLimitService: &model.RateLimitService{Host: "ratelimit", Port: 8081}}
	out, errs, err := serve.Render(dsl.NewDir(dir, time.Now), "edge", translate.Gateway, serve.FormatRateLimit, opts)
	if err != nil || len(errs) > 0 {
		t.Fatalf("render: %v %v", err, errs)
	}
	var got ratelimit.ServiceConfig
	if err := yaml.UnmarshalStrict(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want, err := serve.GroupRateLimits(model.Resolve(parseConfig(t, gw, limitedShop), opts), "edge")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(want.Descriptors) != 2 {
		t.Errorf("rendered %+v\nwant %+v", got, want)
	}
}

// TestRateLimitPublisherTakesTheGatewaysResolvedConfig: the rate limit
// service gets the limits of the config the gateways' publish resolved
// (xds.Report.Resolved), not of a second resolve of its own: here the
// report's resolved config lacks the shop, and so do the limits.
func TestRateLimitPublisherTakesTheGatewaysResolvedConfig(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := parseConfig(t, limitedShop, otherGroup)
	resolved := model.Resolve(parseConfig(t, otherGroup), model.Options{})
	rec := &recordedConfigs{}
	p := &serve.RateLimitPublisher{Next: fixedReport{xds.Report{Resolved: &resolved}}, Group: "edge", Configs: rec, Log: log}
	p.Publish(context.Background(), cfg)
	if len(rec.got) != 1 || len(rec.got[0].Descriptors) != 0 {
		t.Fatalf("published %+v; want no limits: the resolved config has no service of edge", rec.got)
	}
}
