package config

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/tlbproject/tlb/tlb/model"
)

// l7ProbeDoc is a service's `l7Probe:`: how its l7Backends are probed.
type l7ProbeDoc struct {
	// Path makes the probe an HTTP GET of this path (default: a TCP connect).
	Path string `json:"path,omitempty"`
	// Status is the expected HTTP status (default: any 2xx); needs path.
	Status int `json:"status,omitempty"`
}

// l7Service returns the L7 service a file service entry declares with
// `l7Backends:` (nil when it declares none). svc is the entry's parsed
// service; its key names the L7 service. The director probes the backends
// with the timing of the `health:` section, which is therefore required.
func l7Service(path string, s serviceDoc, svc model.Service, withHealth bool, bad func(field, format string, args ...any)) *model.L7Service {
	if s.L7Backends == nil {
		if s.L7Probe != nil {
			bad(path+".l7Probe", "only applies with l7Backends")
		}
		return nil
	}
	if len(*s.L7Backends) == 0 {
		bad(path+".l7Backends", "lists no backend; list at least one ip:port, or leave the field out for a VIP whose health is its gateways'")
	}
	if !withHealth {
		bad(path+".l7Backends", "needs a health: section (its interval, timeout, rise and fall time the probes of L7 backends)")
	}
	p := &model.L7Probe{}
	for j, b := range *s.L7Backends {
		field := fmt.Sprintf("%s.l7Backends[%d]", path, j)
		a, err := netip.ParseAddrPort(b)
		switch {
		case err != nil:
			bad(field, "%q is not ip:port (e.g. 198.51.100.20:8080)", b)
		case a.Port() == 0:
			bad(field, "%q needs a port 1..65535", b)
		default:
			p.Backends = append(p.Backends, a)
		}
	}
	if pr := s.L7Probe; pr != nil {
		p.Path, p.Status = pr.Path, pr.Status
		if pr.Path != "" && (!strings.HasPrefix(pr.Path, "/") || strings.ContainsAny(pr.Path, " \t\r\n#")) {
			bad(path+".l7Probe.path", "%q is not an absolute URL path", pr.Path)
		}
		if pr.Status != 0 && (pr.Status < 100 || pr.Status > 599) {
			bad(path+".l7Probe.status", "%d is not an HTTP status (100..599)", pr.Status)
		}
		if pr.Status != 0 && pr.Path == "" {
			bad(path+".l7Probe.status", "needs l7Probe.path (a TCP probe has no status)")
		}
	}
	return &model.L7Service{VIP: svc.VIP, Name: svc.Key().String(), Probe: p}
}

// l7Names turns the model's names of L7 fields into the file's.
var l7Names = strings.NewReplacer("probe.backends", "l7Backends", "probe.", "l7Probe.")

// l7Error reports a model error about L7 service i, whose entry is
// services[origin[i]], with the file's field names.
func l7Error(fe *model.FieldError, origin []int, bad func(field, format string, args ...any)) {
	field := l7Names.Replace(fe.Field)
	if fe.Index >= 0 && fe.Index < len(origin) {
		field = fmt.Sprintf("services[%d].%s", origin[fe.Index], field)
	} else {
		field = "l7 service " + fe.Service + ": " + field
	}
	bad(field, "%s", l7Names.Replace(fe.Reason))
}
