package director

import (
	"context"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/tlb/model"
)

func TestRejectedFromMemoryLikeValidate(t *testing.T) {
	tests := map[string]struct {
		change  func(d *model.Desired)
		wantErr string
	}{
		"bad weight in a changed service": {change: func(d *model.Desired) { d.Services[7].RealServers[2].Weight = 70000 },
			wantErr: "service 203.0.113.17:80/tcp: realServers[2].weight: must be 0..65535"},
		"two new services with one key": {change: func(d *model.Desired) {
			d.Services = append(d.Services, service("203.0.113.90", 80, mrs("198.18.2.2", 1)), service("203.0.113.90", 80, mrs("198.18.2.3", 1)))
		},
			wantErr: "service 203.0.113.90:80/tcp: vip: duplicate of services[10]"},
		"a new service with a bad scheduler": {change: func(d *model.Desired) {
			s := service("203.0.113.91", 80, mrs("198.18.2.2", 1))
			s.Scheduler = "maglev"
			d.Services = append(d.Services, s)
		},
			wantErr: `service 203.0.113.91:80/tcp: scheduler: "maglev" is not one of`},
		"a changed service given twice": {change: func(d *model.Desired) {
			d.Services[4].RealServers[0].Weight = 9
			d.Services = append(d.Services, d.Services[4])
		},
			wantErr: "service 203.0.113.14:80/tcp: vip: duplicate of services[4]"},
		"an unchanged service duplicated": {change: func(d *model.Desired) { d.Services = append(d.Services, d.Services[2]) },
			wantErr: "service 203.0.113.12:80/tcp: vip: duplicate of services[2]"},
		"VIP ranges that exclude unchanged services": {change: func(d *model.Desired) { d.VIPRanges = []netip.Prefix{netip.MustParsePrefix("203.0.113.0/28")} },
			wantErr: "service 203.0.113.16:80/tcp: vip: 203.0.113.16 is outside the VIP ranges"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := newCacheLab(t, 10, 0)
			bad := model.Desired{Services: slices.Clone(l.want.Services)}
			for i := range bad.Services {
				bad.Services[i].RealServers = slices.Clone(bad.Services[i].RealServers)
			}
			tc.change(&bad)
			l.clock.advance(time.Second)
			res, err := l.d.Reconcile(context.Background(), bad)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !res.Rejected || len(l.f.calls) != 0 {
				t.Fatalf("err %v, rejected %v, calls %v; want %q and nothing written", err, res.Rejected, l.f.calls, tc.wantErr)
			}
			if want := bad.Validate(); err.Error() != "reject desired state, kernel left as it is: "+want.Error() {
				t.Errorf("error %q; want Validate's %q", err, want)
			}
		})
	}
}

func TestSameInputCoversEveryField(t *testing.T) {
	base := service("203.0.113.10", 80, mrs("198.18.2.2", 1))
	base.Scheduler, base.Flags = model.Maglev, []model.Flag{model.MHPort}
	changes := map[string]func(s *model.Service){
		"VIP":         func(s *model.Service) { s.VIP = netip.MustParseAddr("203.0.113.11") },
		"Protocol":    func(s *model.Service) { s.Protocol = model.UDP },
		"Port":        func(s *model.Service) { s.Port = 81 },
		"Scheduler":   func(s *model.Service) { s.Scheduler = model.SourceHashing },
		"Flags":       func(s *model.Service) { s.Flags = nil },
		"RealServers": func(s *model.Service) { s.RealServers[0].Weight = 2 },
		"Encap":       func(s *model.Service) { s.Encap = model.GUE(6080) },
	}
	// A field added to model.Service must be compared too (and may need
	// programming): this fails until it is listed here.
	typ := reflect.TypeFor[model.Service]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		change, ok := changes[name]
		if !ok {
			t.Errorf("model.Service.%s is not compared by sameInput (add it there and here)", name)
			continue
		}
		other := ownCopy(base)
		change(&other)
		if sameInput(base, other) {
			t.Errorf("sameInput misses a change of %s", name)
		}
	}
	if !sameInput(base, ownCopy(base)) {
		t.Error("sameInput differs on a copy")
	}
}
