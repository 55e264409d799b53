package console

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

// workload is the part of a DaemonSet or Deployment the console's
// discovery depends on: its Pods' template.
type workload struct {
	Kind     string            `json:"kind"`
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Template corev1.PodTemplateSpec `json:"template"`
	} `json:"spec"`
}

// deployedWorkloads reads every DaemonSet and Deployment under deploy/
// (wherever the files are, but for the releases' rendered copies), with
// the file each came from.
func deployedWorkloads(t *testing.T) map[string]workload {
	t.Helper()
	out := map[string]workload{}
	root := filepath.Join("..", "..", "deploy")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		// deploy/releases holds rendered copies of deploy/ (one per
		// release), not what deploy/ runs.
		if err == nil && d.IsDir() && path == filepath.Join(root, "releases") {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, doc := range strings.Split(string(b), "\n---") {
			var w workload
			if yaml.Unmarshal([]byte(doc), &w) != nil || (w.Kind != "DaemonSet" && w.Kind != "Deployment") {
				continue
			}
			out[fmt.Sprintf("%s#%d", path, i)] = w
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDiscoveryFindsWhatDeployRuns: the Pods deploy/'s DaemonSets and
// Deployments make are found by the console's discovery (their labels), and
// read at the container ports their listeners serve: the directors at
// 9100, netds at 9101, the gateway groups' l7 at 9480 and their Envoys at 9902.
// A renamed label or port in deploy/ fails here, not in a cluster.
func TestDiscoveryFindsWhatDeployRuns(t *testing.T) {
	var pods []corev1.Pod
	for src, w := range deployedWorkloads(t) {
		switch w.Spec.Template.Labels[LabelName] {
		case PodNameDirector, PodNameNetd, PodNameL7, PodNameGateway:
		default:
			continue
		}
		if !w.Spec.Template.Spec.HostNetwork {
			t.Errorf("%s: %s %s: not on the host network; the console reads it at the node's IP", src, w.Kind, w.Metadata.Name)
		}
		pods = append(pods, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "tlb-system", Name: w.Metadata.Name + "-x", Labels: w.Spec.Template.Labels},
			Spec:       *w.Spec.Template.Spec.DeepCopy(),
			Status:     corev1.PodStatus{HostIP: "198.18.2.2"},
		})
		pods[len(pods)-1].Spec.NodeName = "node-" + w.Metadata.Name
	}
	kc := kubefake.NewClientset()
	for i := range pods {
		if _, err := kc.CoreV1().Pods("tlb-system").Create(context.Background(), &pods[i], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := PodDiscovery{Kube: kc, Namespace: "tlb-system"}.Endpoints(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ports := map[Role][]string{}
	for _, ep := range got {
		u, err := url.Parse(ep.URL)
		if err != nil {
			t.Fatal(err)
		}
		ports[ep.Role] = append(ports[ep.Role], u.Port())
	}
	for role, want := range map[Role]string{RoleDirector: "9100", RoleNetd: "9101", RoleL7: "9480", RoleEnvoy: "9902"} {
		if len(ports[role]) == 0 || slices.ContainsFunc(ports[role], func(p string) bool { return p != want }) {
			t.Errorf("%s: discovered at ports %v, want deploy/'s listener at %s", role, ports[role], want)
		}
	}
}
