package gatewayctl

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

func class(name string, ctrl gatewayv1.GatewayController, cfg string) *gatewayv1.GatewayClass {
	gc := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gatewayv1.GatewayClassSpec{ControllerName: ctrl}}
	if cfg != "" {
		gc.Spec.ParametersRef = &gatewayv1.ParametersReference{Group: tlbv1alpha1.GroupName, Kind: tlbv1alpha1.KindGatewayClassConfig, Name: cfg}
	}
	return gc
}

func gateway(ns, name, class string, addrs ...gatewayv1.GatewaySpecAddress) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name), Generation: 2},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class), Addresses: addrs, Listeners: []gatewayv1.Listener{
			{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType},
			{Name: "https-2", Port: 443, Protocol: gatewayv1.HTTPSProtocolType},
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
			{Name: "dns", Port: 53, Protocol: gatewayv1.UDPProtocolType},
		}},
	}
}

func addr(typ gatewayv1.AddressType, v string) gatewayv1.GatewaySpecAddress {
	return gatewayv1.GatewaySpecAddress{Type: &typ, Value: v}
}

var testConfigs = []*tlbv1alpha1.GatewayClassConfig{{
	ObjectMeta: metav1.ObjectMeta{Name: "prod"},
	Spec:       tlbv1alpha1.GatewayClassConfigSpec{Environment: "production", Pool: "public", GatewayGroup: "edge"},
}}

func TestPlanVIPs(t *testing.T) {
	classes := []*gatewayv1.GatewayClass{
		class("tlb", gatewayapi.ControllerName, "prod"),
		class("plain", gatewayapi.ControllerName, ""),
		class("missing", gatewayapi.ControllerName, "nope"),
		class("other", "example.com/other", ""),
	}
	gws := []*gatewayv1.Gateway{
		gateway("a", "web", "tlb", addr(gatewayv1.IPAddressType, "203.0.113.7"), addr(gatewayv1.IPAddressType, "203.0.113.8")),
		gateway("a", "plain", "plain"),
		gateway("a", "host", "tlb", addr(gatewayv1.HostnameAddressType, "lb.example.com")),
		gateway("a", "lost", "missing"),
		gateway("a", "foreign", "other"),
	}
	p := planVIPs(classes, testConfigs, gws)

	webs := p.services[types.NamespacedName{Namespace: "a", Name: "web"}]
	if len(webs) != 2 || webs[1].Annotations[api.AnnotationVIP] != "203.0.113.8" {
		t.Fatalf("VIP Services for a/web %+v; want one per requested address", webs)
	}
	web := webs[0]
	wantAnn := map[string]string{api.AnnotationEnvironment: "production", api.AnnotationPool: "public",
		api.AnnotationGatewayGroup: "edge", api.AnnotationVIP: "203.0.113.7"}
	for k, v := range wantAnn {
		if web.Annotations[k] != v {
			t.Errorf("a/web annotation %s = %q, want %q", k, web.Annotations[k], v)
		}
	}
	if web.Labels[api.LabelOwningGateway] != "a.web" || *web.Spec.LoadBalancerClass != api.LoadBalancerClass ||
		web.Spec.Type != corev1.ServiceTypeLoadBalancer || web.Spec.Selector != nil {
		t.Errorf("a/web VIP Service = %+v", web)
	}
	if got := web.Spec.Ports; len(got) != 3 || got[0].Port != 53 || got[0].Protocol != corev1.ProtocolUDP || got[0].Name != "udp-53" ||
		got[1].Port != 80 || got[2].Port != 443 || got[2].Protocol != corev1.ProtocolTCP {
		t.Errorf("a/web ports = %+v, want 53/UDP (its UDP listener), 80 and 443 once each", got)
	}
	if ref := metav1.GetControllerOf(web); ref == nil || ref.Kind != "Gateway" || ref.Name != "web" || ref.UID != "a-web" {
		t.Errorf("a/web ownerRef = %+v", ref)
	}
	plains := p.services[types.NamespacedName{Namespace: "a", Name: "plain"}]
	if len(plains) != 1 {
		t.Fatalf("VIP Services for a/plain %+v; want one (the IPAM chooses its VIP)", plains)
	}
	plain := plains[0]
	if plain.Annotations[api.AnnotationGatewayGroup] != tlbv1alpha1.DefaultGatewayGroup ||
		plain.Annotations[api.AnnotationEnvironment] != "" || plain.Annotations[api.AnnotationVIP] != "" {
		t.Errorf("a/plain VIP Service = %+v, want only the default group annotation", plain)
	}
	if msg := p.unsupported[types.NamespacedName{Namespace: "a", Name: "host"}]; msg == "" {
		t.Errorf("a/host with a Hostname address is not reported unsupported")
	}
	if msg := p.unplaced[types.NamespacedName{Namespace: "a", Name: "lost"}]; msg == "" {
		t.Errorf("a/lost of a class with a missing GatewayClassConfig is not reported")
	}
	if _, ok := p.ours[types.NamespacedName{Namespace: "a", Name: "foreign"}]; ok {
		t.Errorf("a/foreign of another controller's class is ours")
	}
	if len(p.services) != 2 {
		t.Errorf("VIP Services planned for %d Gateways, want 2", len(p.services))
	}
}

func TestDiffVIPs(t *testing.T) {
	classes := []*gatewayv1.GatewayClass{class("tlb", gatewayapi.ControllerName, "prod"), class("other", "example.com/other", "")}
	web := gateway("a", "web", "tlb")
	p := planVIPs(classes, testConfigs, []*gatewayv1.Gateway{web, gateway("a", "moved", "other"), gateway("a", "new", "tlb"), gateway("a", "clash", "tlb")})

	current := p.services[types.NamespacedName{Namespace: "a", Name: "web"}][0].DeepCopy()
	current.Name = "web-vip"
	current.Annotations[api.AnnotationAssignedPool] = "public" // the IPAM's
	stale := current.DeepCopy()
	stale.Name = "old-vip"
	stale.OwnerReferences[0].Name = "moved"
	gone := current.DeepCopy()
	gone.Name = "gone-vip"
	gone.OwnerReferences[0].Name = "gone"
	taken := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "clash-vip"}}
	unrelated := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "db"}}

	d := diffVIPs(p, []*corev1.Service{current, stale, gone, taken, unrelated})
	if d.keep != 1 || len(d.update) != 0 {
		t.Errorf("unchanged a/web-vip: keep %d, update %d; want kept", d.keep, len(d.update))
	}
	if len(d.create) != 1 || d.create[0].Name != "new-vip" {
		t.Errorf("create = %v, want a/new-vip", d.create)
	}
	if len(d.delete) != 2 {
		t.Errorf("delete = %d Services, want the VIP Services of a Gateway gone and of one of another class", len(d.delete))
	}
	if d.conflicts[types.NamespacedName{Namespace: "a", Name: "clash"}] == "" {
		t.Errorf("a/clash: taken name not reported: %v", d.conflicts)
	}

	// A changed class config updates the annotations, keeps the IPAM's.
	changed := current.DeepCopy()
	changed.Annotations[api.AnnotationPool] = "internal"
	changed.Spec.Ports = changed.Spec.Ports[:1]
	d = diffVIPs(p, []*corev1.Service{changed})
	if len(d.update) != 1 {
		t.Fatalf("update = %v, want a/web-vip", d.update)
	}
	u := d.update[0]
	if u.Annotations[api.AnnotationPool] != "public" || u.Annotations[api.AnnotationAssignedPool] != "public" || len(u.Spec.Ports) != 3 {
		t.Errorf("updated a/web-vip = %+v", u)
	}
}

func TestVIPServiceName(t *testing.T) {
	long := "a.very-long-gateway-name-that-does-not-fit-into-a-service-name-at-all"
	for name, want := range map[string]string{"web": "web-vip", "1st": "", "a.b": "", "a-b": "a-b-vip", long: ""} {
		got := VIPServiceName(name)
		if want != "" && got != want {
			t.Errorf("VIPServiceName(%q) = %q, want %q", name, got, want)
		}
		if len(got) > 63 || !dns1035.MatchString(got) {
			t.Errorf("VIPServiceName(%q) = %q is not a Service name", name, got)
		}
	}
	if VIPServiceName("a.b") == VIPServiceName("a-b") {
		t.Errorf("a.b and a-b share a VIP Service name")
	}
}

func TestStatusKeepsTransitionTimes(t *testing.T) {
	old := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(old.Add(time.Hour))
	have := gatewayv1.GatewayStatus{Conditions: []metav1.Condition{
		{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: old},
		{Type: "Programmed", Status: metav1.ConditionFalse, Reason: "Pending", LastTransitionTime: old},
	}}
	want := gatewayv1.GatewayStatus{Conditions: []metav1.Condition{
		{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: now},
		{Type: "Programmed", Status: metav1.ConditionFalse, Reason: "Pending", LastTransitionTime: now},
	}}
	if _, changed := gatewayStatus(have, want); changed {
		t.Errorf("only the transition times differ, yet the status is written")
	}
	want.Conditions[1].Status, want.Conditions[1].Reason = metav1.ConditionTrue, "Programmed"
	st, changed := gatewayStatus(have, want)
	if !changed {
		t.Fatalf("Programmed turned True, yet nothing is written")
	}
	if got := meta.FindStatusCondition(st.Conditions, "Accepted").LastTransitionTime; !got.Equal(&old) {
		t.Errorf("unchanged Accepted transition time = %v, want %v", got, old)
	}
	if got := meta.FindStatusCondition(st.Conditions, "Programmed").LastTransitionTime; !got.Equal(&now) {
		t.Errorf("changed Programmed transition time = %v, want %v", got, now)
	}
}

func TestRouteStatusTouchesOnlyOurParents(t *testing.T) {
	ref := func(n string) gatewayv1.ParentReference {
		return gatewayv1.ParentReference{Name: gatewayv1.ObjectName(n)}
	}
	theirs := gatewayv1.RouteParentStatus{ParentRef: ref("x"), ControllerName: "example.com/other",
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}}
	ours := gatewayv1.RouteParentStatus{ParentRef: ref("web"), ControllerName: gatewayapi.ControllerName,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}}
	have := gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{theirs, ours}}

	if _, changed := routeStatus(have, gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{ours}}); changed {
		t.Errorf("same parents, yet the status is written")
	}
	st, changed := routeStatus(have, gatewayv1.RouteStatus{})
	if !changed || len(st.Parents) != 1 || st.Parents[0].ControllerName != "example.com/other" {
		t.Errorf("detached route: status %+v (changed %v), want only the other controller's entry", st, changed)
	}
	if _, changed := routeStatus(gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{theirs}}, gatewayv1.RouteStatus{}); changed {
		t.Errorf("a route with only another controller's parents is written")
	}
}

func TestPolicyStatusTouchesOnlyOurAncestors(t *testing.T) {
	ref := gatewayv1.ParentReference{Name: "web"}
	theirs := gatewayv1.PolicyAncestorStatus{AncestorRef: ref, ControllerName: "example.com/other"}
	ours := gatewayv1.PolicyAncestorStatus{AncestorRef: ref, ControllerName: gatewayapi.ControllerName,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}}
	if _, changed := policyStatus(gatewayv1.PolicyStatus{}, gatewayv1.PolicyStatus{}); changed {
		t.Errorf("no ancestors before or after, yet the status is written")
	}
	st, changed := policyStatus(gatewayv1.PolicyStatus{Ancestors: []gatewayv1.PolicyAncestorStatus{ours}}, gatewayv1.PolicyStatus{})
	if !changed || st.Ancestors == nil || len(st.Ancestors) != 0 {
		t.Errorf("our last ancestor removed: %+v (changed %v), want an empty, non-null list", st, changed)
	}
	st, changed = policyStatus(gatewayv1.PolicyStatus{Ancestors: []gatewayv1.PolicyAncestorStatus{theirs}}, gatewayv1.PolicyStatus{Ancestors: []gatewayv1.PolicyAncestorStatus{ours}})
	if !changed || len(st.Ancestors) != 2 || st.Ancestors[0].ControllerName != "example.com/other" {
		t.Errorf("ancestors = %+v, want theirs kept and ours added", st.Ancestors)
	}
}

// TestStatusWithoutConditionsKeepsDefaults: the API server defaults an
// absent conditions list (Accepted and Programmed Pending); a computed
// status without conditions keeps them rather than writing them away
// on every sync.
func TestStatusWithoutConditionsKeepsDefaults(t *testing.T) {
	pending := []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionUnknown, Reason: "Pending"}}
	ip := gatewayv1.IPAddressType
	have := gatewayv1.GatewayStatus{Conditions: pending, Addresses: []gatewayv1.GatewayStatusAddress{{Type: &ip, Value: "203.0.113.7"}}}
	if _, changed := gatewayStatus(have, gatewayv1.GatewayStatus{Addresses: have.Addresses}); changed {
		t.Errorf("Gateway: no computed conditions, yet the defaulted ones are written away")
	}
	if _, changed := classStatus(gatewayv1.GatewayClassStatus{Conditions: pending}, gatewayv1.GatewayClassStatus{}); changed {
		t.Errorf("GatewayClass: no computed conditions, yet the defaulted ones are written away")
	}
}
