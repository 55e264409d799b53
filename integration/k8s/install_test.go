//go:build k8s

package k8s

import (
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// TestInstallServesTheExamples: issue 25, item 1. The build of deploy/
// with deploy/site as shipped agrees with deploy/examples, so that applying
// both unchanged serves the example Service and Gateway: the director
// serves the L4 cluster of the examples' environment and may announce its
// pools; the gateway group is the one the example Service and
// GatewayClass tlb name, serves their namespace and may read its Secrets
// there. The install holds no Secret and no demo configuration, and every
// Secret its workloads read is created by a command of docs/kubernetes.md.
// A second gateway group (deploy/examples/group-edge) shares no object
// with deploy/ and runs on other nodes.
func TestInstallServesTheExamples(t *testing.T) {
	builds := map[string][]*unstructured.Unstructured{}
	for _, b := range buildDeploy(t) {
		builds[b.dir] = b.objs
	}
	install := builds["deploy"]
	var examples []*unstructured.Unstructured
	for _, f := range []string{"pools.yaml", "service.yaml", "gateway.yaml"} {
		objs, err := apiserver.ReadManifests(filepath.Join(repoRoot(), "deploy", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, objs...)
	}
	find := func(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
		t.Helper()
		for _, o := range objs {
			if o.GetKind() == kind && o.GetName() == name {
				return o
			}
		}
		t.Fatalf("no %s %s", kind, name)
		return nil
	}
	str := func(o *unstructured.Unstructured, fields ...string) string {
		s, _, _ := unstructured.NestedString(o.Object, fields...)
		return s
	}

	// The director: its L4 cluster is the examples' production cluster,
	// whose pools lie in the director file's allowedPrefixes.
	director := find(install, "DaemonSet", "tlb-director")
	cluster := containerEnv(t, director, "director")["L4_CLUSTER"]
	svc := find(examples, "Service", "shop")
	env := svc.GetAnnotations()["tlb.io/environment"]
	if got := str(find(examples, "L4Cluster", cluster), "spec", "environment"); got != env {
		t.Errorf("the director serves L4Cluster %s of environment %q; the example Service asks for %q", cluster, got, env)
	}
	var file struct {
		BGP struct {
			AllowedPrefixes []string `json:"allowedPrefixes"`
		} `json:"bgp"`
	}
	for _, o := range install {
		if o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "tlb-director-config-") {
			if err := yaml.Unmarshal([]byte(str(o, "data", "director.yaml")), &file); err != nil {
				t.Fatal(err)
			}
		}
	}
	pools := 0
	for _, o := range examples {
		if o.GetKind() != "VIPPool" || str(o, "spec", "l4Cluster") != cluster {
			continue
		}
		cidrs, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "cidrs")
		for _, c := range cidrs {
			pools++
			if !within(t, c, file.BGP.AllowedPrefixes) {
				t.Errorf("VIPPool %s's %s is outside the director's bgp.allowedPrefixes %v (deploy/site/director.yaml)", o.GetName(), c, file.BGP.AllowedPrefixes)
			}
		}
	}
	if pools == 0 {
		t.Errorf("deploy/examples has no VIPPool of L4Cluster %s, which the director serves", cluster)
	}

	// The gateway group: the example Service's (no tlb.io/l7-group:
	// "default") and GatewayClass tlb's, serving their namespace.
	gateway := find(install, "DaemonSet", "tlb-gateway-default")
	l7 := containerEnv(t, gateway, "l7")
	group, ns := l7["GATEWAY_GROUP"], l7["GATEWAY_NAMESPACE"]
	want := svc.GetAnnotations()["tlb.io/l7-group"]
	if want == "" {
		want = "default"
	}
	config := find(install, "GatewayClassConfig", "default")
	if group != want || str(config, "spec", "gatewayGroup") != group || str(config, "spec", "environment") != env {
		t.Errorf("gateway group %q; the example Service is of group %q, GatewayClassConfig default names %q (environment %q, want %q)",
			group, want, str(config, "spec", "gatewayGroup"), str(config, "spec", "environment"), env)
	}
	gw := find(examples, "Gateway", "shop")
	if ns != svc.GetNamespace() || ns != gw.GetNamespace() {
		t.Errorf("the gateway group serves namespace %q; the example Service is in %q, the Gateway in %q", ns, svc.GetNamespace(), gw.GetNamespace())
	}
	if rb := find(install, "RoleBinding", "tlb-l7-secrets-"+group); rb.GetNamespace() != ns {
		t.Errorf("RoleBinding %s is in %q, want the group's namespace %q", rb.GetName(), rb.GetNamespace(), ns)
	}
	if got := containerEnv(t, find(install, "Deployment", "tlb-ratelimit-"+group), "l7"); got["GATEWAY_GROUP"] != group || got["GATEWAY_NAMESPACE"] != ns {
		t.Errorf("the rate limit service's l7 has group %q namespace %q, the gateways' %q %q", got["GATEWAY_GROUP"], got["GATEWAY_NAMESPACE"], group, ns)
	}

	// No Secret, no demo DSL in the install; every Secret a workload
	// reads is made by a command of docs/kubernetes.md with those keys.
	doc, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "kubernetes.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range install {
		switch {
		case o.GetKind() == "Secret":
			t.Errorf("the install holds Secret %s", o.GetName())
		case o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "tlb-l7-config-"):
			if data, _, _ := unstructured.NestedMap(o.Object, "data"); len(data) != 0 {
				t.Errorf("the install's DSL ConfigMap %s holds %d files; demo configuration belongs to deploy/examples", o.GetName(), len(data))
			}
		}
		for name, keys := range secretKeys(o) {
			cmd := regexp.MustCompile(`kubectl -n ` + regexp.QuoteMeta(o.GetNamespace()) + ` create secret generic ` + regexp.QuoteMeta(name) + `((?:[^\n]*\\\n)*[^\n]*)`).FindSubmatch(doc)
			if cmd == nil {
				t.Errorf("%s %s reads Secret %s/%s, which no command in docs/kubernetes.md creates", o.GetKind(), o.GetName(), o.GetNamespace(), name)
				continue
			}
			for _, k := range keys {
				if !strings.Contains(string(cmd[1]), "--from-literal="+k+"=") {
					t.Errorf("docs/kubernetes.md creates Secret %s without key %s, which %s %s reads", name, k, o.GetKind(), o.GetName())
				}
			}
		}
	}

	// A second gateway group: one overlay, nothing shared with deploy/,
	// on its own nodes.
	edge := builds[filepath.Join("deploy", "examples", "group-edge")]
	keys := map[string]bool{}
	for _, o := range install {
		keys[objectKey(o)] = true
	}
	for _, o := range edge {
		if keys[objectKey(o)] {
			t.Errorf("deploy/examples/group-edge builds %s, which deploy/ holds too", objectKey(o))
		}
	}
	edgeGateway := find(edge, "DaemonSet", "tlb-gateway-edge")
	if got := containerEnv(t, edgeGateway, "l7")["GATEWAY_GROUP"]; got != "edge" {
		t.Errorf("group edge's l7 serves group %q", got)
	}
	sel := func(o *unstructured.Unstructured) string {
		return str(o, "spec", "template", "spec", "nodeSelector", "tlb.io/gateway-group")
	}
	if sel(edgeGateway) != "edge" || sel(gateway) != "" {
		t.Errorf("gateway nodes: group edge on tlb.io/gateway-group=%q, deploy/'s group on %q; want edge and \"\"", sel(edgeGateway), sel(gateway))
	}
}

// containerEnv is the literal environment of one container of a workload.
func containerEnv(t *testing.T, o *unstructured.Unstructured, container string) map[string]string {
	t.Helper()
	for _, field := range []string{"containers", "initContainers"} {
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", field)
		for _, c := range mapsOf(cs) {
			if c["name"] != container {
				continue
			}
			env := map[string]string{}
			list, _, _ := unstructured.NestedSlice(c, "env")
			for _, e := range mapsOf(list) {
				if v, ok := e["value"].(string); ok {
					env[e["name"].(string)] = v
				}
			}
			return env
		}
	}
	t.Fatalf("%s %s has no container %s", o.GetKind(), o.GetName(), container)
	return nil
}

// secretKeys returns the Secrets a workload's pods read, by name, with
// the keys they read (env secretKeyRef, volume items).
func secretKeys(o *unstructured.Unstructured) map[string][]string {
	out := map[string][]string{}
	pod, ok, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
	if !ok {
		return nil
	}
	vols, _, _ := unstructured.NestedSlice(pod, "volumes")
	for _, v := range mapsOf(vols) {
		name, ok, _ := unstructured.NestedString(v, "secret", "secretName")
		if !ok {
			continue
		}
		items, _, _ := unstructured.NestedSlice(v, "secret", "items")
		for _, it := range mapsOf(items) {
			out[name] = append(out[name], it["key"].(string))
		}
	}
	for _, field := range []string{"initContainers", "containers"} {
		cs, _, _ := unstructured.NestedSlice(pod, field)
		for _, c := range mapsOf(cs) {
			env, _, _ := unstructured.NestedSlice(c, "env")
			for _, e := range mapsOf(env) {
				name, ok, _ := unstructured.NestedString(e, "valueFrom", "secretKeyRef", "name")
				if !ok {
					continue
				}
				key, _, _ := unstructured.NestedString(e, "valueFrom", "secretKeyRef", "key")
				if !slices.Contains(out[name], key) {
					out[name] = append(out[name], key)
				}
			}
		}
	}
	return out
}

// within says whether CIDR c lies inside one of prefixes.
func within(t *testing.T, c string, prefixes []string) bool {
	t.Helper()
	p, err := netip.ParsePrefix(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range prefixes {
		q, err := netip.ParsePrefix(a)
		if err != nil {
			t.Fatalf("allowedPrefixes %q: %v", a, err)
		}
		if q.Bits() <= p.Bits() && q.Contains(p.Addr()) {
			return true
		}
	}
	return false
}
