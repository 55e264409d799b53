package console

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/api"
)

// fakeIPVS returns svcs, or err when set.
type fakeIPVS struct {
	svcs []api.IPVSService
	err  error
}

func (f fakeIPVS) ReadIPVS(context.Context) ([]api.IPVSService, error) { return f.svcs, f.err }

func TestLocalIPVSOnVIPPage(t *testing.T) {
	ipvs := fakeIPVS{svcs: []api.IPVSService{{VIP: "203.0.113.10", Protocol: "tcp", Port: 443, Scheduler: "mh", Flags: []string{"mh-fallback"}, Owned: true,
		RealServers: []api.IPVSRealServer{{Address: "198.18.2.2", Port: 443, Weight: 1, Forwarding: "tunnel", ActiveConnections: 7, InactiveConns: 2},
			{Address: "198.18.2.3", Port: 443, Weight: 0, Forwarding: "tunnel"}}}}}
	col := &Collector{API: fakeAPI{st: testState()}, Components: fakeComponents(testComponents()), IPVS: ipvs, Timeout: 5 * time.Second}
	_, page := getWith(t, col, "/vip/203.0.113.10")
	p := panel(t, page, "vip-ipvs")
	for _, want := range []string{"443/tcp</td><td>mh mh-fallback</td><td>tlb</td>\n<td>198.18.2.2</td><td>1</td><td>tunnel</td><td>7</td><td>2</td>",
		"<td>198.18.2.3</td><td>0</td>"} {
		if !strings.Contains(p, want) {
			t.Errorf("IPVS panel lacks %q:\n%s", want, p)
		}
	}
	// Without --ipvs there is no such panel.
	if _, page := get(t, fakeAPI{st: testState()}, fakeComponents(testComponents()), "/vip/203.0.113.10"); strings.Contains(page, `id="vip-ipvs"`) {
		t.Error("IPVS panel shown without a local IPVS source")
	}

	col.IPVS = fakeIPVS{err: errors.New("open IPVS netlink socket: operation not permitted")}
	_, page = getWith(t, col, "/vip/203.0.113.10")
	if p := panel(t, page, "vip-ipvs"); !strings.Contains(p, `data-source="ipvs">local IPVS unreadable: open IPVS netlink socket: operation not permitted`) {
		t.Errorf("no banner on the IPVS panel:\n%s", p)
	}
	for _, id := range []string{"vip-services", "vip-directors", "vip-traffic"} {
		if strings.Contains(panel(t, page, id), `class="banner"`) {
			t.Errorf("panel %s bannered because local IPVS failed", id)
		}
	}
	_, page = getWith(t, col, "/")
	if !strings.Contains(panel(t, page, "problems"), "local IPVS</td><td>unreadable") {
		t.Error("problems do not list the unreadable IPVS")
	}
}
