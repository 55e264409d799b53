package translate

import (
	"fmt"
	"strings"

	bootstrap "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"
)

// Redacted replaces key material in rendered output.
const Redacted = "[REDACTED]"

// KeyPath is where a gateway finds a certificate's key on disk (the
// mounted Kubernetes Secret), used by the static bootstrap rendering.
func KeyPath(secret string) string { return "/etc/envoy/certs/" + secret + "/tls.key" }

// StaticBootstrap turns a gateway resource set into one Envoy bootstrap
// with everything static (routes inlined, endpoints inlined, secrets with
// the key as a file path), for "envoy --mode validate". Admin listens on
// loopback only. No key bytes are copied into it.
func StaticBootstrap(set Resources) (*bootstrap.Bootstrap, error) {
	routes := map[string]*route.RouteConfiguration{}
	for _, r := range set[resource.RouteType] {
		rc := r.(*route.RouteConfiguration)
		routes[rc.GetName()] = rc
	}
	loads := map[string]*endpoint.ClusterLoadAssignment{}
	for _, r := range set[resource.EndpointType] {
		c := r.(*endpoint.ClusterLoadAssignment)
		loads[c.GetClusterName()] = c
	}
	sr := &bootstrap.Bootstrap_StaticResources{}
	authz := false
	for _, r := range set[resource.ListenerType] {
		l := proto.Clone(r).(*listener.Listener)
		for _, fc := range l.GetFilterChains() {
			for _, f := range fc.GetFilters() {
				var m hcm.HttpConnectionManager
				if f.GetTypedConfig().MessageIs(&m) {
					if err := f.GetTypedConfig().UnmarshalTo(&m); err != nil {
						return nil, fmt.Errorf("render listener %s: %w", l.GetName(), err)
					}
					rc, ok := routes[m.GetRds().GetRouteConfigName()]
					if !ok {
						return nil, fmt.Errorf("render listener %s: no route configuration %q", l.GetName(), m.GetRds().GetRouteConfigName())
					}
					m.RouteSpecifier = &hcm.HttpConnectionManager_RouteConfig{RouteConfig: rc}
					for _, hf := range m.GetHttpFilters() {
						authz = authz || hf.GetName() == ExtAuthzFilter
					}
					f.ConfigType = &listener.Filter_TypedConfig{TypedConfig: mustAny(&m)}
				}
			}
			if ts := fc.GetTransportSocket(); ts != nil {
				var dt tls.DownstreamTlsContext
				if err := ts.GetTypedConfig().UnmarshalTo(&dt); err != nil {
					return nil, fmt.Errorf("render listener %s: %w", l.GetName(), err)
				}
				for _, sc := range dt.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs() {
					sc.SdsConfig = nil // refers to the static secret by name
				}
				ts.ConfigType = &core.TransportSocket_TypedConfig{TypedConfig: mustAny(&dt)}
			}
		}
		sr.Listeners = append(sr.Listeners, l)
	}
	for _, r := range set[resource.ClusterType] {
		c := proto.Clone(r).(*cluster.Cluster)
		if c.GetType() != cluster.Cluster_EDS { // e.g. the rate limit service's, resolved by DNS
			sr.Clusters = append(sr.Clusters, c)
			continue
		}
		c.ClusterDiscoveryType = &cluster.Cluster_Type{Type: cluster.Cluster_STATIC}
		c.EdsClusterConfig = nil
		c.LoadAssignment = loads[c.GetName()]
		sr.Clusters = append(sr.Clusters, c)
	}
	if authz {
		sr.Clusters = append(sr.Clusters, AuthzStaticCluster(DefaultAuthzSocket))
	}
	for _, r := range set[resource.SecretType] {
		s := proto.Clone(r).(*tls.Secret)
		if tc := s.GetTlsCertificate(); tc != nil {
			tc.PrivateKey = &core.DataSource{Specifier: &core.DataSource_Filename{Filename: KeyPath(s.GetName())}}
		}
		sr.Secrets = append(sr.Secrets, s)
	}
	return &bootstrap.Bootstrap{
		Admin: &bootstrap.Admin{Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
			Address: "127.0.0.1", PortSpecifier: &core.SocketAddress_PortValue{PortValue: 9901}}}}},
		StaticResources: sr,
		LayeredRuntime:  RegexRuntime(),
	}, nil
}

// Redact returns a copy of m with every private key replaced by Redacted
// and every JWT HMAC secret by a stand-in key.
func Redact(m proto.Message) proto.Message {
	c := proto.Clone(m)
	if l, ok := c.(*listener.Listener); ok {
		redactListener(l)
	}
	if b, ok := c.(*bootstrap.Bootstrap); ok {
		for _, l := range b.GetStaticResources().GetListeners() {
			redactListener(l)
		}
	}
	if s, ok := c.(*tls.Secret); ok {
		if tc := s.GetTlsCertificate(); tc != nil && tc.GetPrivateKey() != nil && tc.GetPrivateKey().GetFilename() == "" {
			tc.PrivateKey = &core.DataSource{Specifier: &core.DataSource_InlineString{InlineString: Redacted}}
		}
	}
	return c
}

// YAML renders a message as YAML with the proto field names Envoy uses.
// Keys are redacted first.
func YAML(m proto.Message) ([]byte, error) {
	j, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(Redact(m))
	if err != nil {
		return nil, fmt.Errorf("render %s as JSON: %w", proto.MessageName(m), err)
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return nil, fmt.Errorf("render %s as YAML: %w", proto.MessageName(m), err)
	}
	return y, nil
}

// ResourcesYAML renders a resource set as one YAML document per type, in a
// fixed order, with keys redacted.
func ResourcesYAML(set Resources) ([]byte, error) {
	var b strings.Builder
	for _, typ := range []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType, resource.SecretType} {
		items, ok := set[typ]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "# %s\n", typ)
		for _, it := range items {
			y, err := YAML(it)
			if err != nil {
				return nil, err
			}
			b.WriteString("- ")
			b.WriteString(strings.ReplaceAll(strings.TrimRight(string(y), "\n"), "\n", "\n  "))
			b.WriteString("\n")
		}
	}
	return []byte(b.String()), nil
}
