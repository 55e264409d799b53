package connections

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/moby/ipvs"

	"github.com/tlbproject/tlb/tlb/model"
)

type fakeIPVS struct {
	svcs  []*ipvs.Service
	dests map[*ipvs.Service][]*ipvs.Destination
	err   error
}

func (f *fakeIPVS) GetServices() ([]*ipvs.Service, error) { return f.svcs, f.err }

func (f *fakeIPVS) GetDestinations(s *ipvs.Service) ([]*ipvs.Destination, error) {
	return f.dests[s], nil
}

type owned []model.Key

func (o owned) Owned() []model.Key { return o }

func dest(addr string, active, inactive int) *ipvs.Destination {
	return &ipvs.Destination{Address: net.ParseIP(addr), Port: 80, ActiveConnections: active, InactiveConnections: inactive}
}

// TestActiveSumsOwnedServices: active connections are summed per real
// server over the owned services only; inactive ones do not count.
func TestActiveSumsOwnedServices(t *testing.T) {
	web := &ipvs.Service{Address: net.ParseIP("203.0.113.10"), Port: 80, Protocol: syscall.IPPROTO_TCP}
	tls := &ipvs.Service{Address: net.ParseIP("203.0.113.10"), Port: 443, Protocol: syscall.IPPROTO_TCP}
	foreign := &ipvs.Service{Address: net.ParseIP("10.96.0.1"), Port: 443, Protocol: syscall.IPPROTO_TCP}
	f := &fakeIPVS{svcs: []*ipvs.Service{web, tls, foreign}, dests: map[*ipvs.Service][]*ipvs.Destination{
		web:     {dest("198.18.11.2", 2, 5), dest("198.18.12.2", 0, 9)},
		tls:     {dest("198.18.11.2", 3, 0)},
		foreign: {dest("198.18.12.2", 40, 0)},
	}}
	vip := netip.MustParseAddr("203.0.113.10")
	c := New(f, owned{{VIP: vip, Protocol: model.TCP, Port: 80}, {VIP: vip, Protocol: model.TCP, Port: 443}})
	got, err := c.Active(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[netip.Addr]int{netip.MustParseAddr("198.18.11.2"): 5, netip.MustParseAddr("198.18.12.2"): 0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("active = %v, want %v", got, want)
	}
	f.err = errors.New("netlink: interrupted")
	if _, err := c.Active(context.Background()); err == nil || !strings.Contains(err.Error(), "list IPVS services") {
		t.Errorf("a failed read: %v, want an error saying what failed", err)
	}
}
