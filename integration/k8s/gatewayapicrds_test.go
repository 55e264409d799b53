//go:build k8s

package k8s

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const bundleVersion = "gateway.networking.k8s.io/bundle-version"

// TestGatewayAPICRDsInstalledOnlyWhenAbsentOrOlder: item 2 of issue 25.
// deploy/ no longer carries the Gateway API CRDs; the separate step,
// deploy/crds/gateway-api/install.sh run with the real kubectl against
// the real API server, keeps a cluster's newer or other-channel CRD
// untouched, upgrades an older one, and installs an absent one.
func TestGatewayAPICRDsInstalledOnlyWhenAbsentOrOlder(t *testing.T) {
	ctx := context.Background()
	_, dc := clients(t)
	crds := dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	for _, b := range buildDeploy(t) {
		for _, o := range b.objs {
			if o.GetKind() == "CustomResourceDefinition" && strings.HasSuffix(o.GetName(), ".gateway.networking.k8s.io") &&
				b.dir != filepath.Join("deploy", "crds", "gateway-api") {
				t.Errorf("the build of %s holds %s; the Gateway API CRDs belong to the separate step only", b.dir, o.GetName())
			}
		}
	}
	get := func(name string) *unstructured.Unstructured {
		t.Helper()
		u, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get CRD %s: %v", name, err)
		}
		return u
	}
	setVersion := func(name, version, channel string) string {
		t.Helper()
		u := get(name)
		ann := u.GetAnnotations()
		ann[bundleVersion], ann["gateway.networking.k8s.io/channel"] = version, channel
		u.SetAnnotations(ann)
		u, err := crds.Update(ctx, u, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("set %s to %s: %v", name, version, err)
		}
		return u.GetResourceVersion()
	}
	newer := setVersion("referencegrants.gateway.networking.k8s.io", "v9.0.0", "standard")
	experimental := setVersion("grpcroutes.gateway.networking.k8s.io", "v1.6.3", "experimental")
	setVersion("tlsroutes.gateway.networking.k8s.io", "v1.5.1", "standard")
	out := runInstall(t)
	for _, want := range []string{
		"referencegrants.gateway.networking.k8s.io: kept, the cluster runs v9.0.0",
		"grpcroutes.gateway.networking.k8s.io: kept, the cluster runs v1.6.3 (experimental)",
		"tlsroutes.gateway.networking.k8s.io: v1.5.1 is older, upgrading to v1.6.3",
		"httproutes.gateway.networking.k8s.io: kept, the cluster runs v1.6.3 (standard)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("install.sh did not say %q:\n%s", want, out)
		}
	}
	if rv := get("referencegrants.gateway.networking.k8s.io").GetResourceVersion(); rv != newer {
		t.Errorf("the cluster's newer ReferenceGrant CRD was written (resourceVersion %s -> %s)", newer, rv)
	}
	if rv := get("grpcroutes.gateway.networking.k8s.io").GetResourceVersion(); rv != experimental {
		t.Errorf("the cluster's experimental GRPCRoute CRD was written (resourceVersion %s -> %s)", experimental, rv)
	}
	if v := get("tlsroutes.gateway.networking.k8s.io").GetAnnotations()[bundleVersion]; v != "v1.6.3" {
		t.Errorf("the older TLSRoute CRD is at %s after install.sh, want v1.6.3", v)
	}
	// Put the edited CRDs back as other tests expect them.
	setVersion("referencegrants.gateway.networking.k8s.io", "v1.6.3", "standard")
	setVersion("grpcroutes.gateway.networking.k8s.io", "v1.6.3", "standard")

	// An absent CRD is installed.
	if err := crds.Delete(ctx, "backendtlspolicies.gateway.networking.k8s.io", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the BackendTLSPolicy CRD is gone", func() (bool, string) {
		_, err := crds.Get(ctx, "backendtlspolicies.gateway.networking.k8s.io", metav1.GetOptions{})
		return err != nil, "still there"
	})
	out = runInstall(t)
	if !strings.Contains(out, "backendtlspolicies.gateway.networking.k8s.io: absent, installing v1.6.3 (standard)") {
		t.Errorf("install.sh did not install the absent CRD:\n%s", out)
	}
	if v := get("backendtlspolicies.gateway.networking.k8s.io").GetAnnotations()[bundleVersion]; v != "v1.6.3" {
		t.Errorf("BackendTLSPolicy CRD at %q after install.sh, want v1.6.3", v)
	}
}

func runInstall(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(), "deploy", "crds", "gateway-api", "install.sh"))
	cmd.Env = append(os.Environ(), "KUBECTL="+kubectlBinary(t), "KUBECONFIG="+server.Kubeconfig)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	t.Logf("install.sh:\n%s", out)
	return string(out)
}

// kubectlBinary is the kubectl of TLB_KUBECTL (tools/k8s-test.sh builds
// it from the Kubernetes module the API server comes from), or one built
// here.
func kubectlBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("TLB_KUBECTL"); bin != "" {
		return bin
	}
	bin := filepath.Join(server.Dir, "kubectl")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.Command("go", "build", "-mod=mod", "-o", bin, "k8s.io/kubernetes/cmd/kubectl")
	cmd.Dir = filepath.Join(repoRoot(), "tools", "kubernetes")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("TLB_KUBECTL is unset and building kubectl from tools/kubernetes failed "+
			"(tools/k8s-test.sh builds it and sets TLB_KUBECTL): %v\n%s", err, out)
	}
	return bin
}
