package controller

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/poll"
	"github.com/tlbproject/tlb/ipam"
)

// TestPoolStatusWrittenOnlyWhenChanged runs the pool half of the
// controller step by step on fake clients: a VIPPool of IPv6 and one of
// IPv4 both say Ready with their counts, and writing status again with
// nothing changed writes nothing.
func TestPoolStatusWrittenOnlyWhenChanged(t *testing.T) {
	dc := fakePools(t, pool("v4", "c", "203.0.113.0/30"), pool("v6", "c", "2001:db8::/126"))
	c, err := New(Options{Client: fake.NewClientset(), Dynamic: dc, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.dynInformers.Start(ctx.Done())
	defer func() { cancel(); c.dynInformers.Shutdown() }()
	if !cache.WaitForCacheSync(ctx.Done(), c.crdSync...) {
		t.Fatal("caches did not sync")
	}
	if err := c.applyConfig(); err != nil {
		t.Fatalf("a set with an IPv6 pool is refused as a whole: %v", err)
	}
	if _, err := c.alloc.Allocate("ns/a", ipam.Request{Environment: "prod", Families: []ipam.Family{ipam.IPv4}}); err != nil {
		t.Fatal(err)
	}
	if u := c.alloc.PoolUsage("v6"); u != (ipam.Usage{Free: 4}) {
		t.Fatalf("the IPv6 pool counts %+v, want 4 free", u)
	}
	statusWrites := func() int {
		n := 0
		for _, a := range dc.Actions() {
			if a.GetVerb() == "update" && a.GetSubresource() == "status" {
				n++
			}
		}
		return n
	}
	if err := c.writePoolStatus(ctx); err != nil {
		t.Fatal(err)
	}
	if n := statusWrites(); n != 3 {
		t.Fatalf("%d status writes, want 3 (two pools, one cluster)", n)
	}
	get := func(name string) (p v1alpha1.VIPPool) {
		t.Helper()
		cachedAs(t, c.pools, name, &p)
		return p
	}
	cluster := func() (cl v1alpha1.L4Cluster) {
		t.Helper()
		cachedAs(t, c.clusters, "c", &cl)
		return cl
	}
	// The cluster's status is never empty (its counts are not omitempty),
	// so the cache holds the written status when it has the condition.
	poll.Until(t, 10*time.Second, "the cache holds the written status", func() bool {
		return len(get("v4").Status.Conditions) == 1 && len(get("v6").Status.Conditions) == 1 && len(cluster().Status.Conditions) == 1
	})
	v4, v6 := get("v4"), get("v6")
	if r := v4.Status.Conditions[0]; v4.Status.Used != 1 || v4.Status.Free != 3 || r.Status != metav1.ConditionTrue || r.Reason != v1alpha1.ReasonAllocating {
		t.Errorf("v4 status %+v, want used 1, free 3, Ready True", v4.Status)
	}
	if r := v6.Status.Conditions[0]; v6.Status.Used != 0 || v6.Status.Free != 4 || r.Status != metav1.ConditionTrue || r.Reason != v1alpha1.ReasonAllocating {
		t.Errorf("v6 status %+v, want used 0, free 4, Ready True", v6.Status)
	}
	if err := c.writePoolStatus(ctx); err != nil {
		t.Fatal(err)
	}
	if n := statusWrites(); n != 3 {
		t.Fatalf("a second pass with nothing changed wrote status %d more times", n-3)
	}
}

// cachedAs decodes the object name of lister into into.
func cachedAs(t *testing.T, lister cache.GenericLister, name string, into any) {
	t.Helper()
	o, err := lister.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := fromUnstructured(o, into); err != nil {
		t.Fatal(err)
	}
}
