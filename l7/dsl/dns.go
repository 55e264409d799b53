package dsl

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/tlbproject/tlb/l7/model"
)

// endpointsModel reads an upstream's endpoints as written: each an
// ip:port, or a single host:port whose name every gateway resolves
// through DNS (model.DNSName).
func endpointsModel(in []string, field, file string, errs *[]error) ([]model.Endpoint, *model.DNSName) {
	var eps []model.Endpoint
	var dns *model.DNSName
	for j, e := range in {
		f := fmt.Sprintf("%s[%d]", field, j)
		if ap, err := netip.ParseAddrPort(e); err == nil {
			eps = append(eps, model.Endpoint{Addr: ap, Weight: 1})
			continue
		}
		n, err := model.ParseDNSName(e)
		if err != nil {
			*errs = append(*errs, &FieldError{File: file, Field: f, Msg: fmt.Sprintf("want ip:port or host:port with a DNS name: %v", err)})
			continue
		}
		if dns != nil || len(in) > 1 {
			*errs = append(*errs, &FieldError{File: file, Field: f, Msg: fmt.Sprintf("%s is a DNS name: an upstream has IP endpoints or one DNS name, not several", e)})
			continue
		}
		dns = &n
	}
	return eps, dns
}

// addressTargets turns seed 000's route targets written as host:port
// (target: todolist:8082) into upstreams of the service, one per address,
// named host-port ("todolist-8082"): a DNS upstream for a name, an
// endpoint for an IP address.
type addressTargets struct {
	declared  map[string]int // upstream name -> index in the file
	made      map[string]string
	upstreams []model.Upstream
	file      string
	errs      *[]error
}

func newAddressTargets(ups []upstreamDoc, file string, errs *[]error) *addressTargets {
	a := &addressTargets{declared: map[string]int{}, made: map[string]string{}, file: file, errs: errs}
	for i, u := range ups {
		a.declared[u.Name] = i
	}
	return a
}

// upstream returns the upstream a route's target names: the target
// itself when it names an upstream, the upstream made for it when it is
// an address.
func (a *addressTargets) upstream(target, field string) string {
	if !strings.Contains(target, ":") {
		return target
	}
	if name, ok := a.made[target]; ok {
		return name
	}
	bad := func(format string, args ...any) string {
		*a.errs = append(*a.errs, &FieldError{File: a.file, Field: field, Msg: fmt.Sprintf(format, args...)})
		return target
	}
	u, err := model.AddressUpstream(target)
	if err != nil {
		return bad("want the name of an upstream of this service, or host:port: %v", err)
	}
	if i, ok := a.declared[u.Name]; ok {
		return bad("%s would be the upstream %q, which upstreams[%d] declares: name that upstream instead", target, u.Name, i)
	}
	for other, name := range a.made {
		if name == u.Name {
			return bad("%s and %s would both be the upstream %q: declare upstreams for them", target, other, u.Name)
		}
	}
	a.made[target] = u.Name
	a.upstreams = append(a.upstreams, u)
	return u.Name
}
