package xds_test

import (
	"context"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlbproject/tlb/l7/xds"
)

// TestBootstrapGenerationAdmitsAnOlderL7sGateway: a gateway whose
// bootstrap an older l7 wrote (another schema generation) is served when
// it declares this build's bootstrap generation, so an l7 upgrade keeps
// the running Envoy served; another bootstrap generation is refused
// whatever the schema, and only gateways may use it.
func TestBootstrapGenerationAdmitsAnOlderL7sGateway(t *testing.T) {
	r := startServer(t, "")
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.20:8080"))
	cc := dial(t, r.addr)
	withBoot := func(id, kind, schema, boot string) *core.Node {
		md, _ := structpb.NewStruct(map[string]any{xds.MetaKind: kind, xds.MetaSchema: schema, xds.MetaBootstrap: boot})
		return &core.Node{Id: id, Cluster: "edge", Metadata: md}
	}
	for name, tc := range map[string]struct {
		n    *core.Node
		code codes.Code
	}{
		"older l7, same bootstrap": {withBoot("gw-old", "gateway", "tlb.l7.older", xds.BootstrapGeneration()), codes.OK},
		"same l7, other bootstrap": {withBoot("gw-boot", "gateway", schema, "tlb.bootstrap.other"), codes.FailedPrecondition},
		"grpc client, bootstrap":   {withBoot("grpc-1", "grpc", "tlb.l7.older", xds.BootstrapGeneration()), codes.FailedPrecondition},
	} {
		t.Run(name, func(t *testing.T) {
			c := newDelta(t, cc, tc.n)
			c.subscribe(resource.ClusterType, nil, nil)
			resp, err := c.next(5 * time.Second)
			if tc.code == codes.OK {
				if err != nil || len(resp.GetResources()) == 0 {
					t.Fatalf("not served: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("served %s to a refused client", resp.GetTypeUrl())
			}
			if status.Code(err) != tc.code {
				t.Fatalf("refused with %v, want %v", err, tc.code)
			}
		})
	}
}
