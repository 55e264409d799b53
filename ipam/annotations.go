package ipam

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/tlbproject/tlb/api"
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
	if v, ok := ann[api.AnnotationEnvironment]; ok {
		if len(v) > 63 || !labelRe.MatchString(v) {
			return ServiceRequest{}, fmt.Errorf("annotation %s: %q is not an environment name; use lower-case letters, digits and '-', at most 63 characters, e.g. \"production\"", api.AnnotationEnvironment, v)
		}
		sr.Environment = Environment(v)
	}
	if v, ok := ann[api.AnnotationPool]; ok {
		if len(v) > 253 || !subdomainRe.MatchString(v) {
			return ServiceRequest{}, fmt.Errorf("annotation %s: %q is not a VIPPool name; use the metadata.name of a VIPPool", api.AnnotationPool, v)
		}
		sr.Pool = v
	}
	if v, ok := ann[api.AnnotationVIP]; ok {
		addrs, err := parseVIPs(v)
		if err != nil {
			return ServiceRequest{}, err
		}
		sr.Addresses = addrs
	}
	if v, ok := ann[api.AnnotationL7]; ok {
		b, err := ParseBool(api.AnnotationL7, v)
		if err != nil {
			return ServiceRequest{}, err
		}
		sr.L7 = b
	}
	if sr.Environment == "" && sr.Pool == "" && len(sr.Addresses) == 0 {
		if defaultEnv == "" {
			return ServiceRequest{}, fmt.Errorf("no annotation %s, %s or %s, and the controller has no default environment; set %s, e.g. \"production\"", api.AnnotationEnvironment, api.AnnotationPool, api.AnnotationVIP, api.AnnotationEnvironment)
		}
		sr.Environment = defaultEnv
	}
	return sr, nil
}

// parseVIPs reads tlb.io/vip: one address, or one per family separated by
// a comma ("203.0.113.10,2001:db8::10").
func parseVIPs(v string) ([]netip.Addr, error) {
	var out []netip.Addr
	for part := range strings.SplitSeq(v, ",") {
		addr, err := netip.ParseAddr(strings.TrimSpace(part))
		if err != nil || addr.Zone() != "" || addr.Is4In6() || !addr.IsGlobalUnicast() {
			return nil, fmt.Errorf("annotation %s: %q is not a unicast IP address; set one address from a VIPPool, or one per family separated by a comma, e.g. \"203.0.113.10\" or \"203.0.113.10,2001:db8::10\"", api.AnnotationVIP, part)
		}
		if slices.ContainsFunc(out, func(o netip.Addr) bool { return FamilyOf(o) == FamilyOf(addr) }) {
			return nil, fmt.Errorf("annotation %s: %q names two %s addresses; set at most one address per family", api.AnnotationVIP, v, FamilyOf(addr))
		}
		out = append(out, addr)
	}
	return out, nil
}
