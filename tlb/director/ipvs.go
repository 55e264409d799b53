package director

import "github.com/moby/ipvs"

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

// countingIPVS counts the writes (netlink requests that change state) made
// through it.
type countingIPVS struct {
	IPVS
	writes int
}

func (c *countingIPVS) NewService(s *ipvs.Service) error {
	c.writes++
	return c.IPVS.NewService(s)
}

func (c *countingIPVS) UpdateService(s *ipvs.Service) error {
	c.writes++
	return c.IPVS.UpdateService(s)
}

func (c *countingIPVS) DelService(s *ipvs.Service) error {
	c.writes++
	return c.IPVS.DelService(s)
}

func (c *countingIPVS) NewDestination(s *ipvs.Service, d *ipvs.Destination) error {
	c.writes++
	return c.IPVS.NewDestination(s, d)
}

func (c *countingIPVS) UpdateDestination(s *ipvs.Service, d *ipvs.Destination) error {
	c.writes++
	return c.IPVS.UpdateDestination(s, d)
}

func (c *countingIPVS) DelDestination(s *ipvs.Service, d *ipvs.Destination) error {
	c.writes++
	return c.IPVS.DelDestination(s, d)
}
