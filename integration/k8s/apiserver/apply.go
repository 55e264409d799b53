package apiserver

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// ApplyAll applies objects as `kubectl apply --server-side
// --force-conflicts` does (server-side apply, field manager "kubectl",
// conflicts forced): new objects are created, existing ones take the
// fields given. Objects no longer in objs are left alone, as kubectl
// leaves them. A request the server answers with "retry" is sent again,
// as CreateAll does.
func (s *Server) ApplyAll(ctx context.Context, objs []*unstructured.Unstructured) error {
	return s.eachObject(ctx, objs, func(r dynamic.ResourceInterface, o *unstructured.Unstructured) error {
		what := "apply " + o.GetKind() + " " + o.GetName()
		err := retry(ctx, what, s.OnRetry, func(ctx context.Context) error {
			_, err := r.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: "kubectl", Force: true})
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
}
