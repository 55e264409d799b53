package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sharedkube "github.com/tlbproject/tlb/internal/kube"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
)

// SetDrain drains gateway node name (drain true: the annotation
// tlb.io/drain set to now, in RFC 3339) or puts it back (false: the
// annotation removed), with one merge patch of the node's annotations.
// A node that does not exist, or is not a gateway node (label
// tlb.io/gateway=true), is an error naming it, and nothing is written.
// It returns whether the node changed (draining an already draining
// node keeps its first time, so its timeout is not restarted).
func SetDrain(ctx context.Context, client kubernetes.Interface, name string, drain bool, now time.Time) (bool, error) {
	nodes := client.CoreV1().Nodes()
	n, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("node %s: %w", name, err)
	}
	if !sharedkube.IsGateway(n) {
		return false, &sharedkube.ObjectError{Kind: "Node", Name: name, Field: "metadata.labels[" + api.LabelGateway + "]",
			Reason: "not \"true\": not a gateway node, so no director routes to it; nothing to drain"}
	}
	_, draining := n.Annotations[api.AnnotationDrain]
	if draining == drain {
		return false, nil
	}
	var value any // null removes the annotation
	if drain {
		value = now.UTC().Format(time.RFC3339)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": n.ResourceVersion, // fail rather than race another writer
		"annotations":     map[string]any{api.AnnotationDrain: value},
	}})
	if err != nil {
		return false, err
	}
	if _, err := nodes.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return false, fmt.Errorf("node %s: annotate %s: %w", name, api.AnnotationDrain, err)
	}
	return true, nil
}
