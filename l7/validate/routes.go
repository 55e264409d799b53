package validate

import (
	"errors"
	"fmt"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// vhostResult is what checking one virtual host found.
type vhostResult struct {
	err  error
	refs []target
}

// routeConfiguration checks a route configuration as Message and
// targets would, one virtual host at a time: the configuration without
// its virtual hosts, then each virtual host, reusing the result of every
// one that was already in last (the same message: callers never modify
// a resource once built). A route table of 3,000 hosts that gains one is
// not walked again. It returns the references, the results to keep for
// the next time, and the error.
//
// ValidateAll of a RouteConfiguration checks each virtual host with the
// virtual host's own ValidateAll and has no rule over the list as a
// whole, so the verdict is the same as checking the whole message.
func routeConfiguration(rc *route.RouteConfiguration, last map[*route.VirtualHost]vhostResult) ([]target, map[*route.VirtualHost]vhostResult, error) {
	top := &route.RouteConfiguration{}
	dst := top.ProtoReflect()
	vhostsField := dst.Descriptor().Fields().ByName("virtual_hosts")
	rc.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd != vhostsField {
			dst.Set(fd, v) // shares sub-messages, which are only read
		}
		return true
	})
	var errs []error
	if err := Message(top); err != nil {
		errs = append(errs, err)
	}
	refs := targets(top)
	seen := map[target]bool{}
	for _, t := range refs {
		seen[t] = true
	}
	next := make(map[*route.VirtualHost]vhostResult, len(rc.GetVirtualHosts()))
	for i, vh := range rc.GetVirtualHosts() {
		r, ok := last[vh]
		if !ok {
			r, ok = next[vh]
		}
		if !ok {
			r = vhostResult{err: Message(vh), refs: targets(vh)}
		}
		next[vh] = r
		if r.err != nil {
			// As RouteConfiguration's own ValidateAll words it.
			errs = append(errs, fmt.Errorf("invalid RouteConfiguration.VirtualHosts[%d]: embedded message failed validation | caused by: %w", i, r.err))
		}
		for _, t := range r.refs {
			if !seen[t] {
				seen[t] = true
				refs = append(refs, t)
			}
		}
	}
	return refs, next, errors.Join(errs...)
}
