package pipeline_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/certexpiry"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/routetable"
	"github.com/tlbproject/tlb/l7/xds"
	"github.com/tlbproject/tlb/l7/xdsbench"
	"github.com/tlbproject/tlb/l7/xdsbuild"
)

// servePipeline is l7 serve's pipeline (serve.go): the merger, one
// resolve, then the xDS snapshots, the certificate expiry gauge and the
// route table.
func servePipeline(b *testing.B) pipeline.Publisher {
	b.Helper()
	log := slog.New(slog.DiscardHandler)
	srv := xds.New(b.Context(), log, nil, time.Now, xds.Options{Group: "edge"})
	p := pipeline.New(model.NewResolver(), model.Options{}, time.Now,
		xdsbuild.New(srv), certexpiry.New(nil, time.Now), routetable.New("edge"))
	return pipeline.NewMerger(p, nil, log, nil, "dsl").For("dsl")
}

// BenchmarkPublishEndpointChange is one change of make bench-envoy's xDS
// run: 10,000 services served, the endpoints of 100 of them change.
func BenchmarkPublishEndpointChange(b *testing.B) {
	p := servePipeline(b)
	cfg := xdsbench.Config(10000)
	ctx := context.Background()
	if rep := p.Publish(ctx, cfg); len(rep.Problems) > 0 || len(rep.Invalid) > 0 {
		b.Fatalf("bench config rejected: %v %v", rep.Problems, rep.Invalid)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for k := 1; k <= b.N; k++ {
		xdsbench.Mutate(&cfg, k)
		if rep := round(ctx, p, cfg); len(rep.Changed) != 1 {
			b.Fatalf("round %d changed %v", k, rep.Changed)
		}
	}
}

// BenchmarkPublishNewService is one new route of make bench-envoy's
// propagation run: 3,000 services on one listener, one more is added
// (and the one added before removed, so the size stays).
func BenchmarkPublishNewService(b *testing.B) {
	p := servePipeline(b)
	cfg := xdsbench.Config(3000)
	ctx := context.Background()
	if rep := p.Publish(ctx, cfg); len(rep.Problems) > 0 || len(rep.Invalid) > 0 {
		b.Fatalf("bench config rejected: %v %v", rep.Problems, rep.Invalid)
	}
	base := cfg.Services
	b.ReportAllocs()
	b.ResetTimer()
	for k := 1; k <= b.N; k++ {
		cfg.Services = append(base[:len(base):len(base)], newService(k))
		if rep := round(ctx, p, cfg); len(rep.Changed) != 1 {
			b.Fatalf("round %d changed %v", k, rep.Changed)
		}
	}
}

// round publishes cfg with the profile label round=1, so a profile of
// the benchmark can leave out its first, full build (-tagfocus round=1).
func round(ctx context.Context, p pipeline.Publisher, cfg model.Config) pipeline.Report {
	var rep pipeline.Report
	pprof.Do(ctx, pprof.Labels("round", "1"), func(ctx context.Context) { rep = p.Publish(ctx, cfg) })
	return rep
}

func newService(k int) model.Service {
	name := fmt.Sprintf("new-%05d", k)
	return model.Service{
		Name: name, Group: "edge", Hosts: []string{name + ".example.com"},
		Listeners: []model.ListenerRef{{Gateway: "bench", Listener: "web"}},
		Upstreams: []model.Upstream{{Name: "main", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort("198.19.0.1:8080"), Weight: 1}}}},
		Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "main", Weight: 1}}}},
	}
}
