package bootstrap_test

import (
	"net/netip"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/l7/bootstrap"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
	"github.com/tlbproject/tlb/l7/xds"
)

func gateway() bootstrap.Gateway {
	return bootstrap.Gateway{Group: "edge", Generation: xds.Generation(), XDSSocket: "/run/tlb/xds.sock",
		AuthzSocket: translate.DefaultAuthzSocket, AdminSocket: "/run/tlb/envoy-admin.sock", Stats: netip.MustParseAddrPort("192.0.2.7:9902"),
		MaxHeapBytes: 1 << 30, MaxConnections: 50000}
}

// TestBootstrapParsesAndValidates: what "l7 bootstrap" writes parses back
// strictly as an Envoy v3 Bootstrap and passes ValidateAll, with every Any
// inside (no Envoy binary here: this stands in for envoy --mode validate).
func TestBootstrapParsesAndValidates(t *testing.T) {
	b, err := bootstrap.Build(gateway())
	if err != nil {
		t.Fatal(err)
	}
	y, err := translate.YAML(b)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	var back bootstrapv3.Bootstrap
	if err := (protojson.UnmarshalOptions{}).Unmarshal(j, &back); err != nil {
		t.Fatalf("not an Envoy v3 bootstrap: %v\n%s", err, y)
	}
	if err := validate.Message(&back); err != nil {
		t.Fatalf("fails validation: %v", err)
	}
}

// TestBootstrapReachesOnlyThePod: ADS and admin are unix sockets in the
// pod's volume, not TCP ports of the node; the node declares its group and
// this build's generation; the only TCP listener is the stats one.
func TestBootstrapReachesOnlyThePod(t *testing.T) {
	b, err := bootstrap.Build(gateway())
	if err != nil {
		t.Fatal(err)
	}
	if p := b.GetAdmin().GetAddress().GetPipe(); p.GetPath() != "/run/tlb/envoy-admin.sock" || p.GetMode() != 0o600 {
		t.Errorf("admin must be the unix socket, mode 0600: %v", b.GetAdmin().GetAddress())
	}
	ads := b.GetDynamicResources().GetAdsConfig().GetGrpcServices()
	if len(ads) != 1 || ads[0].GetEnvoyGrpc().GetClusterName() != bootstrap.XDSCluster {
		t.Fatalf("ADS must use the one xDS cluster: %v", ads)
	}
	for _, c := range b.GetStaticResources().GetClusters() {
		for _, e := range c.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints() {
			if e.GetEndpoint().GetAddress().GetPipe() == nil {
				t.Errorf("cluster %s reaches a TCP address: %v", c.GetName(), e.GetEndpoint().GetAddress())
			}
		}
	}
	md := b.GetNode().GetMetadata().GetFields()
	if b.GetNode().GetCluster() != "edge" || md[xds.MetaSchema].GetStringValue() != xds.Generation() || md[xds.MetaKind].GetStringValue() != "gateway" ||
		md[xds.MetaBootstrap].GetStringValue() != xds.BootstrapGeneration() {
		t.Errorf("node: %v", b.GetNode())
	}
	// l7 may be away for seconds while its pod is replaced: Envoy retries
	// the stream often enough to be served again within ADSRetryMax.
	back := ads[0].GetEnvoyGrpc().GetRetryPolicy().GetRetryBackOff()
	if back.GetBaseInterval().AsDuration() != bootstrap.ADSRetryBase || back.GetMaxInterval().AsDuration() != bootstrap.ADSRetryMax {
		t.Errorf("ADS retry backoff %v; want %s to %s", back, bootstrap.ADSRetryBase, bootstrap.ADSRetryMax)
	}
	ls := b.GetStaticResources().GetListeners()
	if len(ls) != 1 || ls[0].GetAddress().GetSocketAddress().GetAddress() != "192.0.2.7" || ls[0].GetAddress().GetSocketAddress().GetPortValue() != 9902 {
		t.Fatalf("want one stats listener on 192.0.2.7:9902: %v", ls)
	}
}

// TestStatsListenerIsReadOnly: the stats listener forwards exactly GET
// /stats/prometheus and GET /ready to the admin API and answers 404 to
// everything else, so /quitquitquit or /runtime_modify never reach it.
func TestStatsListenerIsReadOnly(t *testing.T) {
	b, err := bootstrap.Build(gateway())
	if err != nil {
		t.Fatal(err)
	}
	var m hcm.HttpConnectionManager
	if err := b.GetStaticResources().GetListeners()[0].GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(&m); err != nil {
		t.Fatal(err)
	}
	var forwarded []string
	for _, r := range m.GetRouteConfig().GetVirtualHosts()[0].GetRoutes() {
		switch a := r.GetAction().(type) {
		case *route.Route_Route:
			hs := r.GetMatch().GetHeaders()
			if r.GetMatch().GetPath() == "" || len(hs) != 1 || hs[0].GetName() != ":method" || hs[0].GetStringMatch().GetExact() != "GET" {
				t.Errorf("route %s forwards more than one exact GET path: %v", r.GetName(), r.GetMatch())
			}
			forwarded = append(forwarded, r.GetMatch().GetPath()+"->"+a.Route.GetCluster())
		case *route.Route_DirectResponse:
			if a.DirectResponse.GetStatus() != 404 {
				t.Errorf("fallback answers %d", a.DirectResponse.GetStatus())
			}
		default:
			t.Errorf("unexpected action %T", a)
		}
	}
	if got := strings.Join(forwarded, ","); got != "/stats/prometheus->"+bootstrap.AdminCluster+",/ready->"+bootstrap.AdminCluster {
		t.Errorf("forwarded %s", got)
	}
}

func TestBootstrapNeedsEverything(t *testing.T) {
	g := gateway()
	g.XDSSocket = ""
	if _, err := bootstrap.Build(g); err == nil {
		t.Error("a bootstrap without the xDS socket was built")
	}
	g = gateway()
	g.Stats = netip.AddrPort{}
	if _, err := bootstrap.Build(g); err == nil {
		t.Error("a bootstrap without the stats address was built")
	}
}

// TestAuthzClusterOnTheSocket: the cluster ext_authz names reaches l7's
// authorization service on its unix socket over HTTP/2, and is left out
// when no socket is given.
func TestAuthzClusterOnTheSocket(t *testing.T) {
	b, err := bootstrap.Build(gateway())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range b.GetStaticResources().GetClusters() {
		if c.GetName() != translate.AuthzCluster {
			continue
		}
		found = true
		ep := c.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress()
		if ep.GetPipe().GetPath() != translate.DefaultAuthzSocket || c.GetTypedExtensionProtocolOptions()["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"] == nil {
			t.Errorf("authz cluster = %v", c)
		}
	}
	if !found {
		t.Fatal("no authz cluster")
	}
	g := gateway()
	g.AuthzSocket = ""
	if b, _ = bootstrap.Build(g); len(b.GetStaticResources().GetClusters()) != 2 {
		t.Errorf("clusters without an authz socket: %d, want ADS and admin only", len(b.GetStaticResources().GetClusters()))
	}
}

// TestRegexRuntime: the gateway's Envoy takes regexes up to twice the
// model's limit (Envoy's default of 100 would refuse whole route tables
// the model accepts) and warns past the limit itself.
func TestRegexRuntime(t *testing.T) {
	b, err := bootstrap.Build(gateway())
	if err != nil {
		t.Fatal(err)
	}
	ls := b.GetLayeredRuntime().GetLayers()
	if len(ls) != 2 || ls[1].GetAdminLayer() == nil {
		t.Fatalf("runtime layers %v, want the static layer then the admin layer", ls)
	}
	f := ls[0].GetStaticLayer().GetFields()
	if f[translate.RegexErrorLevelKey].GetNumberValue() != 2*model.MaxRegexProgramSize || f[translate.RegexWarnLevelKey].GetNumberValue() != model.MaxRegexProgramSize {
		t.Errorf("static layer %v", ls[0].GetStaticLayer())
	}
}
