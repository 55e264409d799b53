package controller

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/ipam"
)

func cluster(name, env string) *v1alpha1.L4Cluster {
	return &v1alpha1.L4Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}, Spec: v1alpha1.L4ClusterSpec{Environment: env}}
}

// loadedOf models pools and clusters as applyConfig does: the load of a
// valid set, or the error of an invalid one over the load of good.
func loadedOf(t *testing.T, good loaded, pools []*v1alpha1.VIPPool, clusters []*v1alpha1.L4Cluster) loaded {
	t.Helper()
	var ps []v1alpha1.VIPPool
	for _, p := range pools {
		ps = append(ps, *p)
	}
	var cs []v1alpha1.L4Cluster
	for _, c := range clusters {
		cs = append(cs, *c)
	}
	m, err := modelConfig(ps, cs)
	if err != nil {
		good.err = err
		return good
	}
	return loadedFrom(ps, cs, m)
}

func TestReadyCondition(t *testing.T) {
	prod := cluster("prod", "production")
	v4 := pool("v4", "prod", "203.0.113.0/24")
	v6 := pool("v6", "prod", "198.51.100.0/30", "2001:db8::/120")
	onlyV6 := cluster("only-v6", "lab")
	v6only := pool("v6only", "only-v6", "2001:db8:1::/120")
	valid := loadedOf(t, loaded{}, []*v1alpha1.VIPPool{v4, v6, v6only}, []*v1alpha1.L4Cluster{prod, onlyV6})
	// v4 edited to overlap another pool: the set is invalid, the
	// allocator keeps generation 1 of v4.
	v4edited := v4.DeepCopy()
	v4edited.Generation = 2
	overlap := pool("overlap", "prod", "203.0.113.128/25")
	invalid := loadedOf(t, valid, []*v1alpha1.VIPPool{v4edited, overlap}, []*v1alpha1.L4Cluster{prod})
	orphan := pool("orphan", "missing", "192.0.2.0/24")
	noCluster := loadedOf(t, valid, []*v1alpha1.VIPPool{v4, orphan}, []*v1alpha1.L4Cluster{prod})

	tests := map[string]struct {
		got         metav1.Condition
		status      metav1.ConditionStatus
		reason, msg string
	}{
		"IPv4 pool":                   {valid.poolReady(v4), metav1.ConditionTrue, v1alpha1.ReasonAllocating, "allocated from this pool"},
		"pool with an IPv6 CIDR":      {valid.poolReady(v6), metav1.ConditionTrue, v1alpha1.ReasonAllocating, "allocated from this pool"},
		"cluster with IPv4 pools":     {valid.clusterReady(prod), metav1.ConditionTrue, v1alpha1.ReasonAllocating, "allocated to this L4Cluster"},
		"cluster with IPv6 pool only": {valid.clusterReady(onlyV6), metav1.ConditionTrue, v1alpha1.ReasonAllocating, "allocated to this L4Cluster"},
		"pool the overlap names":      {invalid.poolReady(overlap), metav1.ConditionFalse, v1alpha1.ReasonInvalid, `VIPPool "overlap": CIDR 203.0.113.128/25 overlaps`},
		"edited pool, set invalid":    {invalid.poolReady(v4edited), metav1.ConditionFalse, v1alpha1.ReasonNotLoaded, `not loaded while the VIPPools and L4Clusters are invalid: invalid VIP pool configuration: VIPPool "overlap"`},
		"loaded pool, set invalid":    {invalid.poolReady(v4), metav1.ConditionTrue, v1alpha1.ReasonAllocating, ""},
		"pool naming no cluster":      {noCluster.poolReady(orphan), metav1.ConditionFalse, v1alpha1.ReasonInvalid, `spec.l4Cluster "missing" names no L4Cluster`},
		"new cluster, set invalid": {noCluster.clusterReady(cluster("new", "production")), metav1.ConditionFalse, v1alpha1.ReasonNotLoaded,
			`VIPPool "orphan": spec.l4Cluster`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := tc.got
			if g.Type != v1alpha1.ConditionReady || g.Status != tc.status || g.Reason != tc.reason || !strings.Contains(g.Message, tc.msg) {
				t.Fatalf("condition %+v, want %s %s with message containing %q", g, tc.status, tc.reason, tc.msg)
			}
		})
	}
	if g := invalid.poolReady(v4edited); g.ObservedGeneration != 2 {
		t.Errorf("observedGeneration %d, want the object's 2", g.ObservedGeneration)
	}
}

// TestPlanPoolStatus: counts and Ready are planned from the model; a
// plan equal to the status is no write, and lastTransitionTime moves only
// when Ready's status does.
func TestPlanPoolStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := pool("p", "c", "203.0.113.0/30")
	p.Generation = 1
	l := loaded{pools: map[string]int64{"p": 1}}

	st, changed := planPoolStatus(p, ipam.Usage{Used: 1, Free: 3}, l.poolReady(p), t0)
	if !changed || st.Used != 1 || st.Free != 3 || len(st.Conditions) != 1 || !st.Conditions[0].LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("first plan: %+v changed=%v", st, changed)
	}
	p.Status = st
	if _, changed := planPoolStatus(p, ipam.Usage{Used: 1, Free: 3}, l.poolReady(p), t0.Add(time.Hour)); changed {
		t.Fatal("a resync with nothing changed plans a write")
	}
	st, changed = planPoolStatus(p, ipam.Usage{Used: 2, Free: 2}, l.poolReady(p), t0.Add(time.Hour))
	if !changed || st.Used != 2 || !st.Conditions[0].LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("a count change: %+v changed=%v, want the new counts and Ready's time kept", st, changed)
	}
	p.Status = st
	p.Generation = 2 // not loaded: Ready goes False, its time moves
	st, changed = planPoolStatus(p, ipam.Usage{}, l.poolReady(p), t0.Add(2*time.Hour))
	if c := st.Conditions[0]; !changed || c.Status != metav1.ConditionFalse || !c.LastTransitionTime.Time.Equal(t0.Add(2*time.Hour)) || c.ObservedGeneration != 2 {
		t.Fatalf("Ready after an unloaded edit: %+v", c)
	}
	if p.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Fatal("planning changed the cached object's conditions")
	}

	cl := cluster("c", "prod")
	cst, changed := planClusterStatus(cl, ipam.Usage{Used: 2, Free: 8}, 3, loaded{clusters: map[string]int64{"c": 1}, poolsOf: map[string]int{"c": 1}}.clusterReady(cl), t0)
	if !changed || cst.Used != 2 || cst.Free != 8 || cst.Pools != 3 || cst.Conditions[0].Status != metav1.ConditionTrue {
		t.Fatalf("cluster plan: %+v", cst)
	}
	cl.Status = cst
	if _, changed := planClusterStatus(cl, ipam.Usage{Used: 2, Free: 8}, 3, loaded{clusters: map[string]int64{"c": 1}, poolsOf: map[string]int{"c": 1}}.clusterReady(cl), t0.Add(time.Minute)); changed {
		t.Fatal("a cluster resync with nothing changed plans a write")
	}
}
