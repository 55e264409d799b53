package connections

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/moby/ipvs"

	"github.com/tlbproject/tlb/tlb/model"
)

// fakeIPVS holds real servers per service ("vip:port/proto") and records
// which services were read.
type fakeIPVS struct {
	dests map[string][]*ipvs.Destination
	read  []string
	err   error
}

func (f *fakeIPVS) GetDestinations(s *ipvs.Service) ([]*ipvs.Destination, error) {
	id := fmt.Sprintf("%s:%d/%d", s.Address, s.Port, s.Protocol)
	f.read = append(f.read, id)
	if f.err != nil {
		return nil, f.err
	}
	return f.dests[id], nil
}

type owned []model.Key

func (o owned) Owned() []model.Key { return o }

func dest(addr string, active, inactive int) *ipvs.Destination {
	return &ipvs.Destination{Address: net.ParseIP(addr), Port: 80, ActiveConnections: active, InactiveConnections: inactive}
}

// TestCountReadsOnlyTheServicesAsked: connections (active and inactive)
// are summed per real server over the services asked about, each read
// once; a service not asked about is never read, one the director does
// not own is skipped, and a failed read says which service.
func TestCountReadsOnlyTheServicesAsked(t *testing.T) {
	vip := netip.MustParseAddr("203.0.113.10")
	web := model.Key{VIP: vip, Protocol: model.TCP, Port: 80}
	tls := model.Key{VIP: vip, Protocol: model.TCP, Port: 443}
	other := model.Key{VIP: netip.MustParseAddr("203.0.113.11"), Protocol: model.TCP, Port: 80}
	foreign := model.Key{VIP: netip.MustParseAddr("10.96.0.1"), Protocol: model.TCP, Port: 443}
	f := &fakeIPVS{dests: map[string][]*ipvs.Destination{
		"203.0.113.10:80/6":  {dest("198.18.11.2", 2, 5), dest("198.18.12.2", 0, 0)},
		"203.0.113.10:443/6": {dest("198.18.11.2", 3, 0), dest("198.18.12.2", 0, 1)},
		"203.0.113.11:80/6":  {dest("198.18.12.2", 50, 0)},
		"10.96.0.1:443/6":    {dest("198.18.12.2", 40, 0)},
	}}
	c := New(f, owned{web, tls, other})
	got, err := c.Count(context.Background(), []model.Key{web, tls, foreign})
	if err != nil {
		t.Fatal(err)
	}
	want := map[netip.Addr]int{netip.MustParseAddr("198.18.11.2"): 10, netip.MustParseAddr("198.18.12.2"): 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("connections = %v, want %v", got, want)
	}
	if wantRead := []string{"203.0.113.10:80/6", "203.0.113.10:443/6"}; !reflect.DeepEqual(f.read, wantRead) {
		t.Errorf("read %v, want only the owned services asked about %v", f.read, wantRead)
	}

	f.err = errors.New("netlink: interrupted")
	if _, err := c.Count(context.Background(), []model.Key{tls}); err == nil || !strings.Contains(err.Error(), "203.0.113.10:443/tcp") {
		t.Errorf("a failed read: %v, want an error naming the service", err)
	}
}

// TestServiceAddressesIPv6: a key's IPVS service carries its family, so
// an IPv6 service's real servers are read from the IPv6 table.
func TestServiceAddressesIPv6(t *testing.T) {
	s, ok := service(model.Key{VIP: netip.MustParseAddr("2001:db8::10"), Protocol: model.UDP, Port: 53})
	if !ok || s.AddressFamily != 10 || s.Protocol != 17 || s.Port != 53 || s.Address.String() != "2001:db8::10" {
		t.Errorf("service = %+v, %v; want the IPv6 UDP service 2001:db8::10:53", s, ok)
	}
	if _, ok := service(model.Key{VIP: netip.MustParseAddr("2001:db8::10"), Protocol: "icmp"}); ok {
		t.Error("a protocol IPVS does not serve gave a service")
	}
}
