package controller

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/ipam"
)

// loaded is what the allocator holds of the VIPPool and L4Cluster
// objects: the model from which their Ready condition is planned.
type loaded struct {
	// pools and clusters are the generation of each object the
	// allocator holds.
	pools, clusters map[string]int64
	// poolsOf counts the held pools of each cluster.
	poolsOf map[string]int
	// err is why the cached objects are not loaded; nil when they are.
	err error
}

// loadedFrom records the objects of a model the allocator now holds.
func loadedFrom(pools []v1alpha1.VIPPool, clusters []v1alpha1.L4Cluster, m model) loaded {
	l := loaded{pools: map[string]int64{}, clusters: map[string]int64{}, poolsOf: map[string]int{}}
	for _, cl := range clusters {
		l.clusters[cl.Name] = cl.Generation
	}
	for _, p := range pools {
		l.pools[p.Name] = p.Generation
		l.poolsOf[p.Spec.L4Cluster]++
	}
	return l
}

// poolReady is the Ready condition of p.
func (l loaded) poolReady(p *v1alpha1.VIPPool) metav1.Condition {
	cond := func(ok bool, reason, msg string) metav1.Condition {
		return ready(p.Generation, ok, reason, msg)
	}
	if names(l.err, "VIPPool", p.Name) {
		return cond(false, v1alpha1.ReasonInvalid, l.err.Error())
	}
	if gen, ok := l.pools[p.Name]; ok && gen == p.Generation {
		return cond(true, v1alpha1.ReasonAllocating, "VIPs are allocated from this pool")
	}
	return cond(false, v1alpha1.ReasonNotLoaded, notLoaded(l.err))
}

// clusterReady is the Ready condition of cl.
func (l loaded) clusterReady(cl *v1alpha1.L4Cluster) metav1.Condition {
	cond := func(ok bool, reason, msg string) metav1.Condition {
		return ready(cl.Generation, ok, reason, msg)
	}
	if names(l.err, "L4Cluster", cl.Name) {
		return cond(false, v1alpha1.ReasonInvalid, l.err.Error())
	}
	if gen, ok := l.clusters[cl.Name]; !ok || gen != cl.Generation {
		return cond(false, v1alpha1.ReasonNotLoaded, notLoaded(l.err))
	}
	if l.poolsOf[cl.Name] == 0 {
		return cond(false, v1alpha1.ReasonNoVIPPool,
			fmt.Sprintf("no VIPPool that VIPs are allocated from names this L4Cluster; create one with spec.l4Cluster: %s", cl.Name))
	}
	return cond(true, v1alpha1.ReasonAllocating, "VIPs are allocated to this L4Cluster")
}

func ready(gen int64, ok bool, reason, msg string) metav1.Condition {
	st := metav1.ConditionFalse
	if ok {
		st = metav1.ConditionTrue
	}
	return metav1.Condition{Type: v1alpha1.ConditionReady, Status: st, ObservedGeneration: gen, Reason: reason, Message: msg}
}

// names reports whether err is a configuration error about kind/name.
func names(err error, kind, name string) bool {
	var ce *ipam.ConfigError
	return errors.As(err, &ce) && ce.Kind == kind && ce.Name == name
}

func notLoaded(err error) string {
	if err == nil {
		return "not loaded yet"
	}
	return "this spec is not loaded while the VIPPools and L4Clusters are invalid: " + err.Error()
}

// planPoolStatus returns the status p should have and whether it differs
// from p's: nothing to write when it does not. The Ready condition's
// lastTransitionTime moves (to now) only when its status does.
func planPoolStatus(p *v1alpha1.VIPPool, u ipam.Usage, cond metav1.Condition, now time.Time) (v1alpha1.VIPPoolStatus, bool) {
	want := v1alpha1.VIPPoolStatus{Used: clampInt64(u.Used), Free: clampInt64(u.Free), Conditions: withCondition(p.Status.Conditions, cond, now)}
	return want, !equality.Semantic.DeepEqual(want, p.Status)
}

// planClusterStatus is planPoolStatus for an L4Cluster named by pools
// VIPPools.
func planClusterStatus(cl *v1alpha1.L4Cluster, u ipam.Usage, pools int32, cond metav1.Condition, now time.Time) (v1alpha1.L4ClusterStatus, bool) {
	want := v1alpha1.L4ClusterStatus{Used: clampInt64(u.Used), Free: clampInt64(u.Free), Pools: pools,
		Conditions: withCondition(cl.Status.Conditions, cond, now)}
	return want, !equality.Semantic.DeepEqual(want, cl.Status)
}

// withCondition returns a copy of conds with cond set.
func withCondition(conds []metav1.Condition, cond metav1.Condition, now time.Time) []metav1.Condition {
	out := append([]metav1.Condition(nil), conds...)
	cond.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	meta.SetStatusCondition(&out, cond)
	return out
}
