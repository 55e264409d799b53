package ipam

import (
	"fmt"
	"net/netip"
	"regexp"
)

// The Service API of TLB: the load balancer class, the annotations a Service
// sets to choose its VIP, and the annotations the controller writes back.
// docs/kubernetes.md documents each one.
const (
	// LoadBalancerClass is the spec.loadBalancerClass of Services TLB serves.
	LoadBalancerClass = "tlb.io/l4"
	// AnnotationEnabled ("true") opts a LoadBalancer Service without a
	// loadBalancerClass into TLB.
	AnnotationEnabled = "tlb.io/enabled"
	// AnnotationEnvironment names the environment whose L4 clusters may
	// serve the VIP.
	AnnotationEnvironment = "tlb.io/environment"
	// AnnotationPool names the VIPPool to take the VIP from.
	AnnotationPool = "tlb.io/pool"
	// AnnotationVIP asks for one specific address.
	AnnotationVIP = "tlb.io/vip"
	// AnnotationL7 ("true") exposes the Service through the L7 gateway tier.
	AnnotationL7 = "tlb.io/l7"
	// AnnotationGatewayGroup names the L7 gateway group whose nodes serve
	// the VIP of a Gateway API Gateway (set by the Gateway controller on
	// the Gateway's VIP Service); the group must belong to the Service's
	// environment.
	AnnotationGatewayGroup = "tlb.io/gateway-group"
	// LabelOwningGateway ("namespace.name") marks the VIP Service the
	// Gateway controller made for a Gateway API Gateway.
	LabelOwningGateway = "tlb.io/owning-gateway"
	// AnnotationAssignedPool is written by the controller: the pool of the VIP.
	AnnotationAssignedPool = "tlb.io/assigned-pool"
	// AnnotationAssignedL4Cluster is written by the controller: the L4
	// cluster that serves the VIP.
	AnnotationAssignedL4Cluster = "tlb.io/assigned-l4-cluster"
)

var (
	labelRe     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	subdomainRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// ServiceRequest is what a Service's annotations ask for.
type ServiceRequest struct {
	Request
	// L7 is true when the Service is exposed through the L7 gateway tier.
	L7 bool
}

// ParseBool parses the value of a boolean annotation: exactly "true" or
// "false". key names the annotation in the error.
func ParseBool(key, v string) (bool, error) {
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("annotation %s: %q is not a boolean; set it to \"true\" or \"false\"", key, v)
}

// ParseAnnotations reads the TLB annotations of a Service. defaultEnv is
// used when the Service names neither environment, pool nor address. Errors
// name the annotation and say what to set instead.
func ParseAnnotations(ann map[string]string, defaultEnv Environment) (ServiceRequest, error) {
	var sr ServiceRequest
	if v, ok := ann[AnnotationEnvironment]; ok {
		if len(v) > 63 || !labelRe.MatchString(v) {
			return ServiceRequest{}, fmt.Errorf("annotation %s: %q is not an environment name; use lower-case letters, digits and '-', at most 63 characters, e.g. \"production\"", AnnotationEnvironment, v)
		}
		sr.Environment = Environment(v)
	}
	if v, ok := ann[AnnotationPool]; ok {
		if len(v) > 253 || !subdomainRe.MatchString(v) {
			return ServiceRequest{}, fmt.Errorf("annotation %s: %q is not a VIPPool name; use the metadata.name of a VIPPool", AnnotationPool, v)
		}
		sr.Pool = v
	}
	if v, ok := ann[AnnotationVIP]; ok {
		addr, err := netip.ParseAddr(v)
		if err != nil || addr.Zone() != "" || addr.Is4In6() || !addr.IsGlobalUnicast() {
			return ServiceRequest{}, fmt.Errorf("annotation %s: %q is not a unicast IP address; set one address from a VIPPool, e.g. \"203.0.113.10\"", AnnotationVIP, v)
		}
		sr.Address = addr
	}
	if v, ok := ann[AnnotationL7]; ok {
		b, err := ParseBool(AnnotationL7, v)
		if err != nil {
			return ServiceRequest{}, err
		}
		sr.L7 = b
	}
	if sr.Environment == "" && sr.Pool == "" && !sr.Address.IsValid() {
		if defaultEnv == "" {
			return ServiceRequest{}, fmt.Errorf("no annotation %s, %s or %s, and the controller has no default environment; set %s, e.g. \"production\"", AnnotationEnvironment, AnnotationPool, AnnotationVIP, AnnotationEnvironment)
		}
		sr.Environment = defaultEnv
	}
	return sr, nil
}
