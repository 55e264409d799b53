package director

import (
	"fmt"
	"net"
	"slices"
	"syscall"

	"github.com/moby/ipvs"
)

// fakeIPVS behaves like kernel IPVS where the director depends on it:
// services keyed by address, protocol and port; the HASHED flag reported
// back; new destinations inserted at the HEAD of the list (list_add_rcu in
// ip_vs_ctl.c); updates keep a destination's position; adding what exists
// or deleting what does not is an error.
type fakeIPVS struct {
	svcs   []*fakeSvc
	calls  []string
	failOn string // a call prefix that fails, e.g. "NewDestination 203.0.113.10:80"
	// noSched is a scheduler the fake kernel lacks (NewService fails).
	noSched string
}

type fakeSvc struct {
	svc   ipvs.Service
	dests []ipvs.Destination
}

func svcID(s *ipvs.Service) string {
	return fmt.Sprintf("%s/%d", net.JoinHostPort(s.Address.String(), fmt.Sprint(s.Port)), s.Protocol)
}

func destID(d *ipvs.Destination) string {
	return net.JoinHostPort(d.Address.String(), fmt.Sprint(d.Port))
}

func (f *fakeIPVS) call(name string, s *ipvs.Service, d *ipvs.Destination) error {
	c := name + " " + svcID(s)
	if name == "NewService" || name == "UpdateService" {
		c += " " + s.SchedName
	}
	if d != nil {
		c += " " + destID(d)
	}
	f.calls = append(f.calls, c)
	if f.failOn != "" && len(c) >= len(f.failOn) && c[:len(f.failOn)] == f.failOn {
		return fmt.Errorf("injected failure: %s", c)
	}
	return nil
}

func (f *fakeIPVS) find(s *ipvs.Service) int {
	return slices.IndexFunc(f.svcs, func(x *fakeSvc) bool { return svcID(&x.svc) == svcID(s) })
}

func (f *fakeIPVS) GetServices() ([]*ipvs.Service, error) {
	out := make([]*ipvs.Service, 0, len(f.svcs))
	for _, s := range f.svcs {
		c := s.svc
		c.Flags |= svcFlagHashed
		out = append(out, &c)
	}
	return out, nil
}

func (f *fakeIPVS) NewService(s *ipvs.Service) error {
	if err := f.call("NewService", s, nil); err != nil {
		return err
	}
	if s.SchedName == f.noSched {
		return syscall.ENOENT
	}
	if f.find(s) >= 0 {
		return syscall.EEXIST
	}
	c := *s
	c.Address = slices.Clone(s.Address)
	f.svcs = append(f.svcs, &fakeSvc{svc: c})
	return nil
}

func (f *fakeIPVS) UpdateService(s *ipvs.Service) error {
	if err := f.call("UpdateService", s, nil); err != nil {
		return err
	}
	i := f.find(s)
	if i < 0 {
		return syscall.ESRCH
	}
	f.svcs[i].svc.SchedName = s.SchedName
	f.svcs[i].svc.Flags = s.Flags
	return nil
}

func (f *fakeIPVS) DelService(s *ipvs.Service) error {
	if err := f.call("DelService", s, nil); err != nil {
		return err
	}
	i := f.find(s)
	if i < 0 {
		return syscall.ESRCH
	}
	f.svcs = slices.Delete(f.svcs, i, i+1)
	return nil
}

func (f *fakeIPVS) GetDestinations(s *ipvs.Service) ([]*ipvs.Destination, error) {
	i := f.find(s)
	if i < 0 {
		return nil, syscall.ESRCH
	}
	out := make([]*ipvs.Destination, 0, len(f.svcs[i].dests))
	for _, d := range f.svcs[i].dests {
		c := d
		out = append(out, &c)
	}
	return out, nil
}

func (f *fakeIPVS) findDest(fs *fakeSvc, d *ipvs.Destination) int {
	return slices.IndexFunc(fs.dests, func(x ipvs.Destination) bool { return destID(&x) == destID(d) })
}

func (f *fakeIPVS) NewDestination(s *ipvs.Service, d *ipvs.Destination) error {
	if err := f.call("NewDestination", s, d); err != nil {
		return err
	}
	i := f.find(s)
	if i < 0 {
		return syscall.ESRCH
	}
	if f.findDest(f.svcs[i], d) >= 0 {
		return syscall.EEXIST
	}
	c := *d
	c.Address = slices.Clone(d.Address)
	f.svcs[i].dests = slices.Insert(f.svcs[i].dests, 0, c) // at the head, like the kernel
	return nil
}

func (f *fakeIPVS) UpdateDestination(s *ipvs.Service, d *ipvs.Destination) error {
	if err := f.call("UpdateDestination", s, d); err != nil {
		return err
	}
	i := f.find(s)
	if i < 0 {
		return syscall.ESRCH
	}
	j := f.findDest(f.svcs[i], d)
	if j < 0 {
		return syscall.ENOENT
	}
	f.svcs[i].dests[j].Weight = d.Weight
	f.svcs[i].dests[j].ConnectionFlags = d.ConnectionFlags
	return nil
}

func (f *fakeIPVS) DelDestination(s *ipvs.Service, d *ipvs.Destination) error {
	if err := f.call("DelDestination", s, d); err != nil {
		return err
	}
	i := f.find(s)
	if i < 0 {
		return syscall.ESRCH
	}
	j := f.findDest(f.svcs[i], d)
	if j < 0 {
		return syscall.ENOENT
	}
	f.svcs[i].dests = slices.Delete(f.svcs[i].dests, j, j+1)
	return nil
}

// order returns the destination addresses of the service with id (as
// svcID) in list order, with their weights.
func (f *fakeIPVS) order(id string) []string {
	for _, s := range f.svcs {
		if svcID(&s.svc) == id {
			var out []string
			for _, d := range s.dests {
				out = append(out, fmt.Sprintf("%s w%d", d.Address, d.Weight))
			}
			return out
		}
	}
	return nil
}

// fakeSysctls is an in-memory sysctl table counting writes.
type fakeSysctls struct {
	values map[string]string
	writes int
}

func (f *fakeSysctls) Get(name string) (string, error) {
	v, ok := f.values[name]
	if !ok {
		return "", fmt.Errorf("no sysctl %s", name)
	}
	return v, nil
}

func (f *fakeSysctls) Set(name, value string) error {
	if f.values == nil {
		f.values = map[string]string{}
	}
	f.values[name] = value
	f.writes++
	return nil
}
