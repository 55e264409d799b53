package gatewayctl

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func route(uid, rv string) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r", UID: types.UID(uid), ResourceVersion: rv}}
}

func TestOwnWritesPendingUntilTheCacheShowsANewerVersion(t *testing.T) {
	w := newOwnWrites()
	if w.pending(kindHTTPRoute, route("a", "10")) {
		t.Fatal("an object never written is pending")
	}
	w.wrote(kindHTTPRoute, route("a", "10"))
	if !w.pending(kindHTTPRoute, route("a", "10")) {
		t.Error("the cached version our write replaced is not pending")
	}
	if w.pending(kindGateway, route("a", "10")) {
		t.Error("a write of one kind makes another kind pending")
	}
	w.sweep()
	if !w.pending(kindHTTPRoute, route("a", "10")) {
		t.Error("a record consulted by the last sync was swept")
	}
	if w.pending(kindHTTPRoute, route("a", "11")) {
		t.Error("the cache shows a newer version, yet the object is pending")
	}
	if w.len() != 0 {
		t.Errorf("%d records left after the cache caught up; want 0", w.len())
	}
}

func TestOwnWritesSweepForgetsObjectsNoSyncConsulted(t *testing.T) {
	w := newOwnWrites()
	w.wrote(kindHTTPRoute, route("gone", "5"))
	w.wrote(kindHTTPRoute, route("kept", "7"))
	w.sweep() // the sync that wrote them consulted neither before writing
	if w.len() != 0 {
		t.Fatalf("%d records after a sweep no sync consulted; want 0", w.len())
	}
	w.wrote(kindHTTPRoute, route("gone", "5"))
	w.wrote(kindHTTPRoute, route("kept", "7"))
	if !w.pending(kindHTTPRoute, route("kept", "7")) {
		t.Fatal("kept is not pending")
	}
	w.sweep()
	if w.len() != 1 || !w.pending(kindHTTPRoute, route("kept", "7")) {
		t.Errorf("after a sweep: %d records; want only kept's", w.len())
	}
}
