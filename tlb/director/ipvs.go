package director

import (
	"time"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/model"
)

// IPVS is the part of the kernel's IPVS netlink interface the director
// uses. *ipvs.Handle from github.com/moby/ipvs implements it; open one with
// ipvs.New(nsPath) ("" = the current network namespace).
type IPVS interface {
	GetServices() ([]*ipvs.Service, error)
	NewService(*ipvs.Service) error
	UpdateService(*ipvs.Service) error
	DelService(*ipvs.Service) error
	GetDestinations(*ipvs.Service) ([]*ipvs.Destination, error)
	NewDestination(*ipvs.Service, *ipvs.Destination) error
	UpdateDestination(*ipvs.Service, *ipvs.Destination) error
	DelDestination(*ipvs.Service, *ipvs.Destination) error
}

var _ IPVS = (*ipvs.Handle)(nil)

// meteredIPVS counts the writes (netlink requests that change state) made
// through it and adds up the time spent in every call, reads included:
// the kernel's work plus the netlink library's encoding and parsing.
type meteredIPVS struct {
	IPVS
	now    func() time.Time
	writes int
	spent  time.Duration
}

// timed runs call, adding its duration to spent.
func (m *meteredIPVS) timed(call func() error) error {
	start := m.now()
	err := call()
	m.spent += m.now().Sub(start)
	return err
}

func (m *meteredIPVS) write(call func() error) error {
	m.writes++
	return m.timed(call)
}

func (m *meteredIPVS) GetServices() (out []*ipvs.Service, err error) {
	err = m.timed(func() error { out, err = m.IPVS.GetServices(); return err })
	return out, err
}

func (m *meteredIPVS) GetDestinations(s *ipvs.Service) (out []*ipvs.Destination, err error) {
	err = m.timed(func() error { out, err = m.IPVS.GetDestinations(s); return err })
	return out, err
}

func (m *meteredIPVS) NewService(s *ipvs.Service) error {
	return m.write(func() error { return m.IPVS.NewService(s) })
}

func (m *meteredIPVS) UpdateService(s *ipvs.Service) error {
	return m.write(func() error { return m.IPVS.UpdateService(s) })
}

func (m *meteredIPVS) DelService(s *ipvs.Service) error {
	return m.write(func() error { return m.IPVS.DelService(s) })
}

func (m *meteredIPVS) NewDestination(s *ipvs.Service, d *ipvs.Destination) error {
	return m.write(func() error { return m.IPVS.NewDestination(s, d) })
}

func (m *meteredIPVS) UpdateDestination(s *ipvs.Service, d *ipvs.Destination) error {
	return m.write(func() error { return m.IPVS.UpdateDestination(s, d) })
}

func (m *meteredIPVS) DelDestination(s *ipvs.Service, d *ipvs.Destination) error {
	return m.write(func() error { return m.IPVS.DelDestination(s, d) })
}

func (m *meteredIPVS) NewTunnelDestination(s *ipvs.Service, d *ipvs.Destination, e model.Encap) error {
	return m.write(func() error { return tunnelsOf(m.IPVS).NewTunnelDestination(s, d, e) })
}

func (m *meteredIPVS) UpdateTunnelDestination(s *ipvs.Service, d *ipvs.Destination, e model.Encap) error {
	return m.write(func() error { return tunnelsOf(m.IPVS).UpdateTunnelDestination(s, d, e) })
}

func (m *meteredIPVS) GetTunnelDestinations(s *ipvs.Service) (out []TunnelDestination, err error) {
	err = m.timed(func() error { out, err = tunnelsOf(m.IPVS).GetTunnelDestinations(s); return err })
	return out, err
}

// meteredSysctls adds up the time spent reading and writing sysctls.
type meteredSysctls struct {
	Sysctls
	now   func() time.Time
	spent time.Duration
}

func (m *meteredSysctls) Get(name string) (string, error) {
	start := m.now()
	defer func() { m.spent += m.now().Sub(start) }()
	return m.Sysctls.Get(name)
}

func (m *meteredSysctls) Set(name, value string) error {
	start := m.now()
	defer func() { m.spent += m.now().Sub(start) }()
	return m.Sysctls.Set(name, value)
}
