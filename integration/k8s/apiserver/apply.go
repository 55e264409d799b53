package apiserver

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// ApplyAll applies objects of any kind the API server serves as
// `kubectl apply --server-side --force-conflicts` does: each is sent whole
// as the configuration of fieldManager, which takes over fields another
// manager set (a create, an earlier apply); an unchanged object stays as
// it is (no new generation). Requests the server answers with "retry" are
// sent again as CreateAll's are.
func (s *Server) ApplyAll(ctx context.Context, fieldManager string, objs []*unstructured.Unstructured) error {
	return s.eachObject(ctx, objs, func(r dynamic.ResourceInterface, o *unstructured.Unstructured) error {
		body, err := o.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		what := "apply " + o.GetKind() + " " + o.GetName()
		force := true
		err = retry(ctx, what, s.OnRetry, func(ctx context.Context) error {
			_, err := r.Patch(ctx, o.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fieldManager, Force: &force})
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
}
