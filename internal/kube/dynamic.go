package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// ListTyped lists a dynamic cache and converts each object to T.
func ListTyped[T any](l cache.GenericLister, kind string) ([]T, error) {
	objs, err := l.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", kind, err)
	}
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		var v T
		if err := FromUnstructured(o, &v); err != nil {
			return nil, fmt.Errorf("read a %s from the cache: %w", kind, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// FromUnstructured converts an object of a dynamic informer's cache into
// its typed form.
func FromUnstructured(o runtime.Object, into any) error {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("unexpected %T in a dynamic cache", o)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("convert %s %q: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}
