package console

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestEventsOnlyAboutOurObjects: of the cluster's Warning Events the
// console keeps those about TLB's objects (reported by our components,
// about a tlb.io object, a Service TLB serves, anything in tlb-system),
// of the last hour, across pages of the list; the rest of the cluster's
// warnings (a CrashLoop elsewhere, another load balancer's Service) are
// not our problems.
func TestEventsOnlyAboutOurObjects(t *testing.T) {
	now := time.Unix(1700000000, 0)
	ev := func(name, component, apiVersion, kind, ns, obj string, age time.Duration) corev1.Event {
		return corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.EventTypeWarning, Reason: name,
			Source:         corev1.EventSource{Component: component},
			InvolvedObject: corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: obj},
			LastTimestamp:  metav1.NewTime(now.Add(-age))}
	}
	pages := [][]corev1.Event{
		{
			ev("ipam-annotation", "tlb-ipam", "v1", "Service", "shop", "not-yet-ours", time.Minute),
			ev("pool-exhausted", "", "tlb.io/v1alpha1", "VIPPool", "", "prod-a", time.Minute),
			ev("crashloop-elsewhere", "kubelet", "v1", "Pod", "shop", "web-7f9", time.Minute),
		},
		{
			ev("our-service", "service-controller", "v1", "Service", "shop", "web", time.Minute),
			ev("other-lb-service", "service-controller", "v1", "Service", "shop", "metallb-one", time.Minute),
			ev("director-backoff", "kubelet", "v1", "Pod", "tlb-system", "tlb-director-x", 2*time.Minute),
			ev("old-pool-event", "", "tlb.io/v1alpha1", "VIPPool", "", "prod-b", 2*time.Hour),
		},
	}
	kc := kubefake.NewClientset()
	kc.PrependReactor("list", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		cont := a.(k8stesting.ListActionImpl).ListOptions.Continue
		if cont == "" {
			return true, &corev1.EventList{ListMeta: metav1.ListMeta{Continue: "page-2"}, Items: pages[0]}, nil
		}
		return true, &corev1.EventList{Items: pages[1]}, nil
	})
	k := KubeSource{Kube: kc, OwnNamespace: "tlb-system", Now: func() time.Time { return now }}
	got, err := k.events(context.Background(), []Service{{Namespace: "shop", Name: "web"}})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range got {
		reasons = append(reasons, e.Reason)
	}
	slices.Sort(reasons)
	want := []string{"director-backoff", "ipam-annotation", "our-service", "pool-exhausted"}
	if !slices.Equal(reasons, want) {
		t.Errorf("events kept %v, want %v", reasons, want)
	}
}
