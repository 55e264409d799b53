package apiserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// The answer a loaded kube-apiserver gave the node test for a CRD create
// (its timeout filter, 504 reason Timeout).
func serverTimedOut() error {
	return apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)
}

func TestRetryable(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	tests := map[string]struct {
		err  error
		want bool
	}{
		"timeout in the server":    {serverTimedOut(), true},
		"server timeout":           {apierrors.NewServerTimeout(gr, "create", 2), true},
		"throttled":                {apierrors.NewTooManyRequests("slow down", 1), true},
		"not serving yet":          {apierrors.NewServiceUnavailable("starting"), true},
		"wrapped timeout":          {errors.Join(errors.New("create CRD"), serverTimedOut()), true},
		"invalid":                  {apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", field.ErrorList{field.Required(field.NewPath("data"), "")}), false},
		"forbidden":                {apierrors.NewForbidden(gr, "x", errors.New("no")), false},
		"not found":                {apierrors.NewNotFound(gr, "x"), false},
		"internal, no retry-after": {apierrors.NewInternalError(errors.New("boom")), false},
		"not from the server":      {errors.New("dial tcp: connection refused"), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Retryable(tc.err); got != tc.want {
				t.Errorf("Retryable(%v) = %v; want %v", tc.err, got, tc.want)
			}
		})
	}
}

func configMap(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "tlb-system"},
	}}
}

// failingCreates makes a fake dynamic client whose first n creates answer
// err, then create for real; it counts the create calls.
func failingCreates(n int, err error) (*dynamicfake.FakeDynamicClient, *int) {
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	calls := 0
	dyn.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls <= n {
			return true, nil, err
		}
		return false, nil, nil
	})
	return dyn, &calls
}

// TestCreateOnceRetries: the create the node test lost to "request did not
// complete within requested timeout" is sent again and the object made;
// each retry is reported. (Before, one 504 failed the whole apply.)
func TestCreateOnceRetries(t *testing.T) {
	dyn, calls := failingCreates(2, serverTimedOut())
	var heard []string
	err := createOnce(context.Background(), dyn.Resource(configMaps).Namespace("tlb-system"), configMap("a"),
		func(what string, err error) { heard = append(heard, what+": "+err.Error()) })
	if err != nil {
		t.Fatalf("createOnce after two 504s: %v", err)
	}
	if *calls != 3 || len(heard) != 2 || !strings.Contains(heard[0], "create ConfigMap a: Timeout: request did not complete") {
		t.Errorf("%d create calls, retries heard %q; want 3 calls and 2 retries", *calls, heard)
	}
	if _, err := dyn.Resource(configMaps).Namespace("tlb-system").Get(context.Background(), "a", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap was not created: %v", err)
	}
}

// TestCreateOnceStops: an error the server will give again is returned at
// once, and AlreadyExists (a create that timed out but was stored) is
// success.
func TestCreateOnceStops(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "a", field.ErrorList{field.Invalid(field.NewPath("data"), "x", "bad")})
	dyn, calls := failingCreates(5, invalid)
	err := createOnce(context.Background(), dyn.Resource(configMaps).Namespace("tlb-system"), configMap("a"), nil)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "create ConfigMap a:") || *calls != 1 {
		t.Errorf("createOnce with an invalid object = %v after %d calls; want the Invalid error naming it, one call", err, *calls)
	}
	exists := apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, "a")
	dyn, calls = failingCreates(5, exists)
	if err := createOnce(context.Background(), dyn.Resource(configMaps).Namespace("tlb-system"), configMap("a"), nil); err != nil || *calls != 1 {
		t.Errorf("createOnce of an existing object = %v after %d calls; want success, one call", err, *calls)
	}
}

// TestCreateOnceGivesUp: a server that keeps timing out fails the create
// when the caller's context ends, saying it was still retryable.
func TestCreateOnceGivesUp(t *testing.T) {
	dyn, calls := failingCreates(1000, serverTimedOut())
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := createOnce(ctx, dyn.Resource(configMaps).Namespace("tlb-system"), configMap("a"), nil)
	if err == nil || !strings.Contains(err.Error(), "still retryable after") || !apierrors.IsTimeout(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("createOnce against a server that always times out = %v; want the deadline and the last 504", err)
	}
	if *calls < 2 {
		t.Errorf("%d create calls in 1s; want retries", *calls)
	}
}
