package validate

import (
	"crypto/sha256"
	"errors"
	"fmt"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// vhostResult is what checking one virtual host found.
type vhostResult struct {
	err  error
	refs []target
	seen uint64
}

// checkRoutes is check for a route configuration: it is hashed whole (its
// Sum is the delta version go-control-plane sends, which Envoy presents
// again when it reconnects), but checked one virtual host at a time: the
// configuration without its virtual hosts, then each virtual host,
// reusing what was found for every one that was already in e (the same
// message: callers never modify a resource once built). A route table of
// 3,000 hosts that gains one walks the new one.
//
// ValidateAll of a RouteConfiguration checks each virtual host with the
// virtual host's own ValidateAll and has no rule over the list as a
// whole, so the verdict is the same as checking the whole message.
func (m *Memo) checkRoutes(e *memoEntry, typ, name string, rc *route.RouteConfiguration) (changed bool, err error) {
	b, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend(m.buf[:0], rc)
	if err != nil {
		return false, fmt.Errorf("%s: encode: %w", resourceID(typ, name), err)
	}
	m.buf = b
	sum := Sum(sha256.Sum256(b))
	if e.vhosts == nil {
		e.vhosts = map[*route.VirtualHost]*vhostResult{}
	}
	for _, vh := range rc.GetVirtualHosts() {
		r := e.vhosts[vh]
		if r == nil {
			r = &vhostResult{err: Message(vh), refs: targets(vh)}
			e.vhosts[vh] = r
		}
		r.seen = m.gen
	}
	if len(e.vhosts) > len(rc.GetVirtualHosts()) {
		for vh, r := range e.vhosts {
			if r.seen != m.gen {
				delete(e.vhosts, vh)
			}
		}
	}
	was := e.res
	e.res = rc
	if was != nil && e.sum == sum {
		return false, nil
	}
	e.sum = sum
	top := withoutVirtualHosts(rc)
	var errs []error
	if err := Message(top); err != nil {
		errs = append(errs, err)
	}
	for i, vh := range rc.GetVirtualHosts() {
		if err := e.vhosts[vh].err; err != nil {
			// As RouteConfiguration's own ValidateAll words it.
			errs = append(errs, fmt.Errorf("invalid RouteConfiguration.VirtualHosts[%d]: embedded message failed validation | caused by: %w", i, err))
		}
	}
	e.refs, e.err = targets(top), nil
	if err := errors.Join(errs...); err != nil {
		e.err = fmt.Errorf("%s: %w", resourceID(typ, name), err)
	}
	return true, nil
}

// withoutVirtualHosts is rc without its virtual hosts; it shares the
// other fields' messages, which are only read.
func withoutVirtualHosts(rc *route.RouteConfiguration) *route.RouteConfiguration {
	top := &route.RouteConfiguration{}
	dst := top.ProtoReflect()
	vhosts := dst.Descriptor().Fields().ByName("virtual_hosts")
	rc.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd != vhosts {
			dst.Set(fd, v)
		}
		return true
	})
	return top
}

// eachRef calls f with each resource e refers to; a route
// configuration's virtual hosts' one by one (a name may come more than
// once).
func (e *memoEntry) eachRef(f func(target)) {
	for _, t := range e.refs {
		f(t)
	}
	if rc, ok := e.res.(*route.RouteConfiguration); ok {
		for _, vh := range rc.GetVirtualHosts() {
			if r := e.vhosts[vh]; r != nil {
				for _, t := range r.refs {
					f(t)
				}
			}
		}
	}
}
