package transport

import (
	"context"
	"fmt"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlbproject/tlb/l7/xds"
)

// adsAnswer is what one ADS request got: the resources of the type asked
// for (Secrets: name -> private key bytes), or the stream's error.
type adsAnswer struct {
	Names   []string
	Keys    map[string][]byte
	Code    string // gRPC status code name, "" when answered
	Message string
}

// askADS opens a state-of-the-world ADS stream on cc as a node of kind and
// group and asks for typ (every resource of it), waiting up to within.
func askADS(cc grpc.ClientConnInterface, kind, group, typ string, within time.Duration) adsAnswer {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	md, _ := structpb.NewStruct(map[string]any{xds.MetaKind: kind, xds.MetaSchema: xds.Generation()})
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		return adsAnswer{Code: status.Code(err).String(), Message: err.Error()}
	}
	if err := stream.Send(&discovery.DiscoveryRequest{Node: &core.Node{Id: "rogue", Cluster: group, Metadata: md}, TypeUrl: typ}); err != nil {
		return adsAnswer{Code: status.Code(err).String(), Message: err.Error()}
	}
	resp, err := stream.Recv()
	if err != nil {
		return adsAnswer{Code: status.Code(err).String(), Message: err.Error()}
	}
	a := adsAnswer{Keys: map[string][]byte{}}
	for _, r := range resp.GetResources() {
		if typ != resource.SecretType {
			a.Names = append(a.Names, fmt.Sprint(r.GetTypeUrl()))
			continue
		}
		var s tlsv3.Secret
		if err := r.UnmarshalTo(&s); err != nil {
			a.Message = err.Error()
			continue
		}
		a.Names = append(a.Names, s.GetName())
		a.Keys[s.GetName()] = s.GetTlsCertificate().GetPrivateKey().GetInlineBytes()
	}
	return a
}
