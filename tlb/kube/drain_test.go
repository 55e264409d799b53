package kube

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/tlb/model"
)

// TestGatewayWeightFromNode: a gateway node's weight follows its Ready
// condition and the exclude label; the drain annotation marks it
// Draining (since its time, or since first seen for "true"); a bad
// annotation is an error naming the node and the annotation, and the
// node serves as without it.
func TestGatewayWeightFromNode(t *testing.T) {
	since := time.Date(2026, 12, 3, 1, 0, 0, 0, time.UTC)
	addr := netip.MustParseAddr("198.18.2.2")
	tests := map[string]struct {
		ready       bool
		labels      map[string]string
		annotations map[string]string
		want        model.RealServer
		err         string
	}{
		"ready: weight 1":       {ready: true, want: model.RealServer{Addr: addr, Weight: 1}},
		"not ready: weight 0":   {want: model.RealServer{Addr: addr}},
		"excluded: weight 0":    {ready: true, labels: map[string]string{api.LabelExcludeFromExternalLoadBalancers: ""}, want: model.RealServer{Addr: addr}},
		"excluded with a value": {ready: true, labels: map[string]string{api.LabelExcludeFromExternalLoadBalancers: "true"}, want: model.RealServer{Addr: addr}},
		"drain true: draining since first seen": {ready: true, annotations: map[string]string{api.AnnotationDrain: "true"},
			want: model.RealServer{Addr: addr, Weight: 1, Draining: true}},
		"drain with a time: draining since then": {ready: true, annotations: map[string]string{api.AnnotationDrain: "2026-12-03T01:00:00Z"},
			want: model.RealServer{Addr: addr, Weight: 1, Draining: true, DrainSince: since}},
		"drain with a bad value: an error, not drained": {ready: true, annotations: map[string]string{api.AnnotationDrain: "yes please"},
			want: model.RealServer{Addr: addr, Weight: 1}, err: "Node gw-1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := gw("gw-1", "198.18.2.2", tc.ready, "")
			for k, v := range tc.labels {
				n.Labels[k] = v
			}
			n.Annotations = tc.annotations
			got, errs := gatewayRealServers([]*corev1.Node{n}, "", true)
			if !reflect.DeepEqual(got, []model.RealServer{tc.want}) {
				t.Errorf("real servers = %+v, want %+v", got, []model.RealServer{tc.want})
			}
			switch {
			case tc.err == "" && len(errs) > 0:
				t.Errorf("errors %v, want none", errs)
			case tc.err != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.err) || !strings.Contains(errs[0].Error(), api.AnnotationDrain)):
				t.Errorf("errors %v, want one naming %s and %s", errs, tc.err, api.AnnotationDrain)
			}
		})
	}
}
