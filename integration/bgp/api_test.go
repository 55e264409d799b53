//go:build !lab

package bgp_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	api "github.com/osrg/gobgp/v3/api"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/anypb"
)

// addPathViaAPI adds a path through GoBGP's gRPC API, bypassing the
// Speaker's own check, to prove the export policy on its own.
func addPathViaAPI(t *testing.T, addr, prefix, nextHop string) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial gobgp api %s: %v", addr, err)
	}
	defer conn.Close()
	p := netip.MustParsePrefix(prefix)
	nlri, _ := anypb.New(&api.IPAddressPrefix{Prefix: p.Addr().String(), PrefixLen: uint32(p.Bits())})
	origin, _ := anypb.New(&api.OriginAttribute{Origin: 0})
	nh, _ := anypb.New(&api.NextHopAttribute{NextHop: nextHop})
	client := api.NewGobgpApiClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var lastErr error
	for ctx.Err() == nil { // the API server starts in the background
		_, lastErr = client.AddPath(ctx, &api.AddPathRequest{TableType: api.TableType_GLOBAL, Path: &api.Path{
			Family: &api.Family{Afi: api.Family_AFI_IP, Safi: api.Family_SAFI_UNICAST},
			Nlri:   nlri, Pattrs: []*anypb.Any{origin, nh},
		}})
		if lastErr == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("add %s through the gobgp api: %v", prefix, lastErr)
}
