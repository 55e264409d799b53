//go:build k8s

package k8s

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/api/v1alpha1"
)

// TestL4ClusterEncapsulationValidatedByAPIServer: the L4Cluster schema
// refuses what the director would (docs/l4.md, "Encapsulation").
func TestL4ClusterEncapsulationValidatedByAPIServer(t *testing.T) {
	ctx := context.Background()
	_, dc := clients(t)
	clusters := dc.Resource(v1alpha1.L4ClusterResource)
	create := func(encap string) error {
		var u unstructured.Unstructured
		doc := "apiVersion: tlb.io/v1alpha1\nkind: L4Cluster\nmetadata: {name: encap}\nspec:\n  environment: prod\n" + encap
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%s: %v", encap, err)
		}
		_, err := clusters.Create(ctx, &u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	for _, good := range []string{"", "  encapsulation: {type: ipip}\n", "  encapsulation: {type: gue, port: 6080}\n"} {
		if err := create(good); err != nil {
			t.Errorf("%q refused: %v", good, err)
		}
	}
	bad := map[string]struct{ spec, field, says string }{
		"gue without port":  {"  encapsulation: {type: gue}\n", "spec.encapsulation.port", "gue needs"},
		"ipip with a port":  {"  encapsulation: {type: ipip, port: 6080}\n", "spec.encapsulation.port", "only gue takes a port"},
		"unknown type":      {"  encapsulation: {type: vxlan, port: 4789}\n", "spec.encapsulation.type", "Unsupported value"},
		"port out of range": {"  encapsulation: {type: gue, port: 70000}\n", "spec.encapsulation.port", "less than or equal to 65535"},
		"no type":           {"  encapsulation: {port: 6080}\n", "spec.encapsulation.type", "Required value"},
	}
	for name, tc := range bad {
		err := create(tc.spec)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err = %v, want Invalid naming %s and saying %q", name, err, tc.field, tc.says)
		}
	}
}
