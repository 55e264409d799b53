package gatewayctl

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// placement is where the VIPs of one GatewayClass's Gateways come from.
type placement struct {
	environment, pool, group string
}

// vipPlan is the desired VIP Services of every Gateway of our classes
// that can have them, and why the others cannot.
type vipPlan struct {
	// services are the desired VIP Services by Gateway, one per
	// requested address in the order of spec.addresses (one the IPAM
	// chooses when there is none). Their names are the diff's to choose
	// (vipdiff.go): an existing Service asking for the same address keeps
	// serving it.
	services map[types.NamespacedName][]*corev1.Service
	// ours are all Gateways of our classes (with or without a VIP
	// Service); a VIP Service of any other Gateway is deleted.
	ours map[types.NamespacedName]*gatewayv1.Gateway
	// unsupported are Gateways whose spec.addresses TLB cannot serve,
	// with the message for their Accepted condition.
	unsupported map[types.NamespacedName]string
	// unplaced are Gateways whose class's parametersRef cannot be
	// resolved; their VIP Services, if any, are kept as they are.
	unplaced map[types.NamespacedName]string
}

// ourClasses returns the placement of every GatewayClass whose
// controllerName is ours, and for those whose parametersRef does not
// resolve to a GatewayClassConfig, why (their Gateways get no VIP).
func ourClasses(classes []*gatewayv1.GatewayClass, configs []*tlbv1alpha1.GatewayClassConfig) (map[string]placement, map[string]string) {
	byName := map[string]*tlbv1alpha1.GatewayClassConfig{}
	for _, c := range configs {
		byName[c.Name] = c
	}
	ok, bad := map[string]placement{}, map[string]string{}
	for _, gc := range classes {
		if gc.Spec.ControllerName != gatewayapi.ControllerName || gc.DeletionTimestamp != nil {
			continue
		}
		ref := gc.Spec.ParametersRef
		if ref == nil {
			ok[gc.Name] = placement{group: tlbv1alpha1.DefaultGatewayGroup}
			continue
		}
		if string(ref.Group) != tlbv1alpha1.GroupName || string(ref.Kind) != tlbv1alpha1.KindGatewayClassConfig {
			bad[gc.Name] = fmt.Sprintf("GatewayClass %s: spec.parametersRef names %s/%s; only %s/%s is supported",
				gc.Name, ref.Group, ref.Kind, tlbv1alpha1.GroupName, tlbv1alpha1.KindGatewayClassConfig)
			continue
		}
		cfg, found := byName[ref.Name]
		if !found {
			bad[gc.Name] = fmt.Sprintf("GatewayClass %s: spec.parametersRef.name: GatewayClassConfig %q not found", gc.Name, ref.Name)
			continue
		}
		ok[gc.Name] = placement{environment: cfg.Spec.Environment, pool: cfg.Spec.Pool, group: cfg.Spec.Group()}
	}
	return ok, bad
}

// planVIPs computes the VIP Services of every Gateway of our classes.
func planVIPs(classes []*gatewayv1.GatewayClass, configs []*tlbv1alpha1.GatewayClassConfig, gateways []*gatewayv1.Gateway) vipPlan {
	placed, bad := ourClasses(classes, configs)
	p := vipPlan{
		services:    map[types.NamespacedName][]*corev1.Service{},
		ours:        map[types.NamespacedName]*gatewayv1.Gateway{},
		unsupported: map[types.NamespacedName]string{},
		unplaced:    map[types.NamespacedName]string{},
	}
	for _, gw := range gateways {
		key := types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}
		class := string(gw.Spec.GatewayClassName)
		pl, isOurs := placed[class]
		if msg, isBad := bad[class]; isBad {
			p.ours[key] = gw
			p.unplaced[key] = msg
			continue
		}
		if !isOurs || gw.DeletionTimestamp != nil {
			continue
		}
		p.ours[key] = gw
		vips, err := requestedVIPs(gw)
		if err != nil {
			p.unsupported[key] = err.Error()
			continue
		}
		for _, vip := range vips {
			p.services[key] = append(p.services[key], vipService(gw, pl, vip))
		}
	}
	return p
}

// requestedVIPs returns the addresses gw asks for, one per spec.addresses
// entry (an invalid address for an entry without value: the IPAM
// chooses), each IP once, or one the IPAM chooses when there is none; any
// type but IPAddress is an error.
func requestedVIPs(gw *gatewayv1.Gateway) ([]netip.Addr, error) {
	var vips []netip.Addr
	for i, a := range gw.Spec.Addresses {
		if a.Type != nil && *a.Type != gatewayv1.IPAddressType {
			return nil, fmt.Errorf("gateway %s/%s: spec.addresses[%d].type %q is not supported; TLB serves only %s addresses",
				gw.Namespace, gw.Name, i, *a.Type, gatewayv1.IPAddressType)
		}
		if a.Value == "" {
			vips = append(vips, netip.Addr{})
			continue
		}
		addr, err := netip.ParseAddr(a.Value)
		if err != nil || addr.Zone() != "" {
			return nil, fmt.Errorf("gateway %s/%s: spec.addresses[%d].value %q is not an IP address", gw.Namespace, gw.Name, i, a.Value)
		}
		if !slices.Contains(vips, addr) {
			vips = append(vips, addr)
		}
	}
	if len(vips) == 0 {
		vips = []netip.Addr{{}}
	}
	return vips, nil
}

// managedAnnotations are the annotations of a VIP Service the controller
// owns (the IPAM owns its tlb.io/assigned-* ones).
var managedAnnotations = []string{api.AnnotationEnvironment, api.AnnotationPool, api.AnnotationVIP, api.AnnotationGatewayGroup, api.AnnotationFleetGroup}

// vipService is the desired VIP Service of gw: a LoadBalancer Service of
// class tlb.io/l4 without a selector, one port per listener port and protocol (UDP for UDP
// listeners, else TCP), labelled and annotated as its spec.infrastructure
// asks (infrastructure.go).
func vipService(gw *gatewayv1.Gateway, pl placement, vip netip.Addr) *corev1.Service {
	ann := map[string]string{api.AnnotationGatewayGroup: pl.group}
	if pl.environment != "" {
		ann[api.AnnotationEnvironment] = pl.environment
	}
	if pl.pool != "" {
		ann[api.AnnotationPool] = pl.pool
	}
	if vip.IsValid() {
		ann[api.AnnotationVIP] = vip.String()
	}
	withFleet(ann, gw, pl.group)
	var ports []corev1.ServicePort
	for _, l := range gw.Spec.Listeners {
		ports = withListenerPort(ports, l.Protocol, l.Port)
	}
	sortPorts(ports)
	class := api.LoadBalancerClass
	noNodePorts := false
	isController := true
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   gw.Namespace,
			Name:        VIPServiceName(gw.Name),
			Labels:      map[string]string{api.LabelOwningGateway: OwningGatewayLabel(gw.Namespace, gw.Name)},
			Annotations: ann,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: gatewayv1.GroupVersion.String(), Kind: "Gateway",
				Name: gw.Name, UID: gw.UID, Controller: &isController,
			}},
		},
		Spec: corev1.ServiceSpec{
			Type:                          corev1.ServiceTypeLoadBalancer,
			LoadBalancerClass:             &class,
			AllocateLoadBalancerNodePorts: &noNodePorts,
			Ports:                         ports,
		},
	}
	withInfrastructure(svc, gw)
	return svc
}

var dns1035 = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// VIPServiceName is the name of the (first) VIP Service of Gateway name:
// name + "-vip" when that is a valid Service name (a DNS-1035 label of at
// most 63 characters), else a prefix of name made valid, a hash of name
// and "-vip", so that two Gateways never share a name.
func VIPServiceName(name string) string { return vipServiceName(name, 1) }

// vipServiceName is the name of the nth VIP Service of Gateway name:
// VIPServiceName's, with "-<n>" after "-vip" from the second on (no other
// Gateway's first VIP Service ends in a digit).
func vipServiceName(name string, n int) string {
	suffix := "-vip"
	if n > 1 {
		suffix += "-" + strconv.Itoa(n)
	}
	if s := name + suffix; len(s) <= 63 && dns1035.MatchString(s) {
		return s
	}
	sum := sha256.Sum256([]byte(name))
	base := strings.Trim(strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, name), "-")
	base = strings.TrimLeft(base, "0123456789-")
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-")
	}
	if base == "" {
		base = "gw"
	}
	return base + "-" + hex.EncodeToString(sum[:])[:10] + suffix
}

// OwningGatewayLabel is the value of api.LabelOwningGateway for Gateway
// namespace/name: "namespace.name", or a prefix of it and a hash when
// that is longer than a label value may be.
func OwningGatewayLabel(namespace, name string) string {
	v := namespace + "." + name
	if len(v) <= 63 {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return strings.TrimRight(v[:50], ".-") + "-" + hex.EncodeToString(sum[:])[:12]
}

// withListenerPort returns ports with the Service port a listener of
// protocol on port needs (TCP, or UDP for UDP listeners) when ports lacks
// it; a listener of a protocol TLB does not serve adds none (Build
// reports it).
func withListenerPort(ports []corev1.ServicePort, protocol gatewayv1.ProtocolType, port gatewayv1.PortNumber) []corev1.ServicePort {
	proto := corev1.ProtocolTCP
	switch protocol {
	case gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType, gatewayv1.TLSProtocolType, gatewayv1.TCPProtocolType:
	case gatewayv1.UDPProtocolType:
		proto = corev1.ProtocolUDP
	default:
		return ports
	}
	if slices.ContainsFunc(ports, func(p corev1.ServicePort) bool { return p.Port == port && p.Protocol == proto }) {
		return ports
	}
	return append(ports, corev1.ServicePort{Name: fmt.Sprintf("%s-%d", strings.ToLower(string(proto)), port), Protocol: proto, Port: port})
}

// sortPorts orders a VIP Service's ports by port, then protocol.
func sortPorts(ports []corev1.ServicePort) {
	slices.SortFunc(ports, func(a, b corev1.ServicePort) int {
		return cmp.Or(int(a.Port-b.Port), strings.Compare(string(a.Protocol), string(b.Protocol)))
	})
}
