package validate

import (
	"fmt"
	"slices"
	"strings"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	udpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
)

// target is a resource that another refers to, by type URL and name.
type target struct {
	typ  resource.Type
	name string
}

// targets returns what res refers to, each once, in the order found.
func targets(res proto.Message) []target {
	var out []target
	seen := map[target]bool{}
	add := func(typ resource.Type, name string) {
		t := target{typ, name}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	var ignored []error
	walk(res.ProtoReflect(), func(m proto.Message, _ string) {
		switch x := m.(type) {
		case *hcm.Rds:
			add(resource.RouteType, x.GetRouteConfigName())
		case *tcpproxy.TcpProxy:
			if c := x.GetCluster(); c != "" {
				add(resource.ClusterType, c)
			}
			for _, w := range x.GetWeightedClusters().GetClusters() {
				add(resource.ClusterType, w.GetName())
			}
		case *udpproxy.Route:
			add(resource.ClusterType, x.GetCluster())
		case *tls.SdsSecretConfig:
			add(resource.SecretType, x.GetName())
		case *route.RouteAction:
			if c := x.GetCluster(); c != "" {
				add(resource.ClusterType, c)
			}
			for _, w := range x.GetWeightedClusters().GetClusters() {
				// The share of unresolved backends goes to a cluster
				// that is missing on purpose (answered 500).
				if n := w.GetName(); n != model.FailedBackendCluster {
					add(resource.ClusterType, n)
				}
			}
		case *cluster.Cluster:
			if x.GetType() == cluster.Cluster_EDS {
				n := x.GetEdsClusterConfig().GetServiceName()
				if n == "" {
					n = x.GetName()
				}
				add(resource.EndpointType, n)
			}
		}
	}, true, "", &ignored)
	return out
}

// refs are references that do not resolve: type URL -> name -> the
// resources that refer to it.
type refs map[resource.Type]map[string][]string

func (r refs) add(typ resource.Type, name, from string) {
	if r[typ] == nil {
		r[typ] = map[string][]string{}
	}
	r[typ][name] = append(r[typ][name], from)
}

// addOnce is add, unless from is the last referrer of that name already
// (the references of one resource are added together).
func (r refs) addOnce(typ resource.Type, name, from string) {
	if l := r[typ][name]; len(l) > 0 && l[len(l)-1] == from {
		return
	}
	r.add(typ, name, from)
}

// dangling is one error per missing resource, in a stable order.
func dangling(missing refs) []error {
	var errs []error
	for _, typ := range []resource.Type{resource.RouteType, resource.ClusterType, resource.EndpointType, resource.SecretType} {
		for _, n := range slices.Sorted(mapsKeys(missing[typ])) {
			errs = append(errs, fmt.Errorf("dangling reference: %s refers to %s %q, which is not in the set", strings.Join(missing[typ][n], ", "), shortType(typ), n))
		}
	}
	return errs
}
