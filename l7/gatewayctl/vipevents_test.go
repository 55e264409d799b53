package gatewayctl

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/internal/poll"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

func warning(svc *corev1.Service, reason, msg string, at time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: svc.Namespace, Name: fmt.Sprintf("%s.%d", svc.Name, at.Unix())},
		InvolvedObject: corev1.ObjectReference{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name, UID: svc.UID},
		Type:           corev1.EventTypeWarning, Reason: reason, Message: msg, LastTimestamp: metav1.NewTime(at),
	}
}

func TestAddressProblems(t *testing.T) {
	p := planVIPs([]*gatewayv1.GatewayClass{class("tlb", gatewayapi.ControllerName, "prod")}, testConfigs,
		[]*gatewayv1.Gateway{gateway("a", "web", "tlb", addr(gatewayv1.IPAddressType, "203.0.113.9"), addr(gatewayv1.IPAddressType, "")), gateway("a", "shop", "tlb")})
	d := diffVIPs(p, nil)
	var created []*corev1.Service
	for _, s := range d.create {
		s.UID = types.UID(s.Name + "-1")
		created = append(created, s)
	}
	d = diffVIPs(p, created) // as the cache shows them
	webKey, shopKey := types.NamespacedName{Namespace: "a", Name: "web"}, types.NamespacedName{Namespace: "a", Name: "shop"}
	web, webAny, shop := d.serving[webKey][0], d.serving[webKey][1], d.serving[shopKey][0]
	if web == nil || webAny == nil || shop == nil {
		t.Fatalf("serving %v; want each created Service serving its request", d.serving)
	}
	shop.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	earlier := *web
	earlier.UID = "web-0" // a Service of the same name, deleted since
	events := []*corev1.Event{
		warning(web, "InUse", "VIP 203.0.113.9 is in use", t0.Add(time.Minute)),
		warning(web, "Exhausted", "no address left", t0),
		warning(&earlier, "NoPool", "old news", t0.Add(time.Hour)),
		warning(webAny, "Exhausted", "pool full", t0),
		warning(shop, "InUse", "shop's", t0),
	}
	normal := warning(web, "Allocated", "not a warning", t0.Add(2*time.Minute))
	normal.Type = corev1.EventTypeNormal
	events = append(events, normal)
	got := addressProblems(p, d, events)
	want := map[types.NamespacedName][]gatewayapi.AddressProblem{webKey: {
		{Address: netip.MustParseAddr("203.0.113.9"), Reason: "InUse", Message: "VIP 203.0.113.9 is in use"},
		{Reason: "Exhausted", Message: "pool full"},
	}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("problems %v; want %v (the last warning of each Service as it is, with the address it asks for; none for a Gateway with its VIP)", got, want)
	}
}

// TestMissingVIPCauseOnTheGateway: the IPAM's refusal (a warning Event on
// the VIP Service) was visible only on the Service; the controller, which
// looks again while a Gateway waits for its VIP, writes it into the
// Gateway's Programmed condition.
func TestMissingVIPCauseOnTheGateway(t *testing.T) {
	_, kc, gc, ctx := fakeController(t)
	var vip *corev1.Service
	poll.Explained(t, 10*time.Second, "the VIP Service of a/web exists", func() (bool, string) {
		var err error
		vip, err = kc.CoreV1().Services("a").Get(ctx, "web-vip", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	ev := warning(vip, "InUse", "VIP 203.0.113.9 is held by Service b/db; choose another address", time.Now())
	if _, err := kc.CoreV1().Events("a").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Explained(t, 10*time.Second, "a/web's Programmed names the IPAM's reason", func() (bool, string) {
		gw, err := gc.GatewayV1().Gateways("a").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "InUse: VIP 203.0.113.9 is held by Service b/db"),
			fmt.Sprintf("conditions %+v", gw.Status.Conditions)
	})
}
