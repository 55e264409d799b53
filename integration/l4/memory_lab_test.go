//go:build lab

package l4

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/model"
)

// TestSingleChangesFromMemoryAndDriftAWriteRunsInto: on the real kernel,
// changes between full listings are planned from what the director
// programmed (one write for a drain, nothing listed), and IPVS changed
// behind its back that such a write runs into (a service deleted, a real
// server deleted, a service of the model created by someone else) is
// repaired in the same reconcile, with no error, canonical order kept.
func TestSingleChangesFromMemoryAndDriftAWriteRunsInto(t *testing.T) {
	p := newProbeLab(t, 1)
	dir := p.dirs[0]
	d, h := newDirector(t, dir)
	set := realServers(10, 20, 30, 40)
	svc := vip.String() + ":80"
	weights := map[netip.Addr]int{}
	want := func(t *testing.T, res director.Result, stale bool) {
		t.Helper()
		if res.StaleMemory != stale || res.FullListing != stale {
			t.Errorf("stale memory %v, full listing %v; want %v", res.StaleMemory, res.FullListing, stale)
		}
		var wantList []destWeight
		for _, a := range set {
			w, ok := weights[a]
			if !ok {
				w = 1
			}
			wantList = append(wantList, destWeight{addr: a.String(), weight: w})
		}
		if got := destWeights(t, h); !slices.Equal(got, wantList) {
			t.Errorf("kernel list %v; want %v (canonical order)", got, wantList)
		}
	}

	if res := reconcile(t, d, webService(set, weights)); !res.FullListing {
		t.Fatal("first reconcile was not a full listing")
	}
	weights[set[1]] = 0
	res := reconcile(t, d, webService(set, weights))
	if res.Writes != 1 {
		t.Errorf("drain from memory made %d writes; want 1", res.Writes)
	}
	want(t, res, false)
	t.Logf("drain from memory: %v (kernel %v), %d write", res.Duration, res.KernelTime, res.Writes)

	dir.Run(t, "ipvsadm", "-D", "-t", svc)
	weights[set[2]] = 0
	want(t, reconcile(t, d, webService(set, weights)), true)

	dir.Run(t, "ipvsadm", "-d", "-t", svc, "-r", set[3].String()+":80")
	weights[set[3]] = 3
	want(t, reconcile(t, d, webService(set, weights)), true)

	// Someone creates the service the model is about to add.
	other := netip.MustParseAddr("203.0.113.11")
	dir.Run(t, "ipvsadm", "-A", "-t", other.String()+":80", "-s", "rr")
	both := webService(set, weights)
	both.Services = append(both.Services, model.Service{VIP: other, Protocol: model.TCP, Port: 80,
		RealServers: []model.RealServer{{Addr: set[0], Weight: 1}}})
	res = reconcile(t, d, both)
	want(t, res, true)
	out := dir.Run(t, "ipvsadm", "-Ln", "-t", other.String()+":80")
	if !strings.Contains(out, "mh") || !strings.Contains(out, set[0].String()+":80") {
		t.Errorf("service created behind the director's back not adopted and programmed:\n%s", out)
	}
	if !slices.Contains(d.Owned(), both.Services[1].Key()) {
		t.Errorf("not recorded as the director's: %v", d.Owned())
	}
	t.Logf("after three drifts repaired in their reconciles:\n%s", dir.Run(t, "ipvsadm", "-Ln"))

	// Memory and kernel agree: a full listing finds nothing to do.
	if res, err := d.ReconcileFull(t.Context(), both); err != nil || res.Writes != 0 {
		t.Errorf("full listing after the repairs: %d writes, err %v; want none", res.Writes, err)
	}
}
