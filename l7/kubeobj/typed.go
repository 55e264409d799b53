package kubeobj

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// Typed decodes the objects of a dynamic informer's cache (TLB's own
// tlb.io kinds) into T. An object that does not decode is an error naming
// it: its CRD's schema should have refused it.
func Typed[T any](l cache.GenericLister) ([]*T, error) {
	objs, err := l.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := make([]*T, 0, len(objs))
	for _, o := range objs {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("unexpected %T in a tlb.io cache", o)
		}
		t := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t); err != nil {
			return nil, fmt.Errorf("decode %s %s: %w", u.GetKind(), cache.NewObjectName(u.GetNamespace(), u.GetName()), err)
		}
		out = append(out, t)
	}
	return out, nil
}
