//go:build lab

package e2e_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/bgp/birdlab"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/integration/k8snode"
	"github.com/tlbproject/tlb/integration/topo"
)

// The image every manifest of deploy/ names, and the lab's pause image.
const (
	tlbImage   = "ghcr.io/tlbproject/tlb:v0.1.0"
	pauseImage = "tlb.lab/pause:1"
)

// TestDeployOnRealNodes installs TLB on two real nodes in the VM (a
// kubelet and containerd each, running the images `make image` builds)
// exactly as docs/kubernetes.md "Deploying" says (checkDocumentedSteps):
// the node labels, the one edit of the site (deploy/site/director.yaml's
// BGP peer: the lab's router), the Gateway API CRDs, the real kustomize's
// build of deploy/ (CRDs, RBAC, the ipam and Gateway controller
// Deployments, the director, netd and gateway DaemonSets), the Secret
// tlb-redis, and deploy/examples as they are with the example Gateway's
// certificate. Then the example Service (l7) and the example Gateway get
// VIPs from the ipam pods, the director pod programs IPVS and announces
// the examples' pool to BIRD, the netd pod binds the VIPs, and a client
// outside reaches a backend through the director and Envoy: plain HTTP on
// the Service's VIP, HTTPS with the certificate verified on the Gateway's.
// A plain L4 Service reaches the gateway node with replies straight back
// (DSR), and every pod is Ready through its own probes. The gateway pod's
// Envoy, from the Envoy image, runs as user 101 with only
// CAP_NET_BIND_SERVICE (its file capability). Last, the installation is
// upgraded from the previous release under load (upgradeFromPrevious):
// no request fails, no Envoy restarts.
func TestDeployOnRealNodes(t *testing.T) {
	checkDocumentedSteps(t)
	begin := time.Now()
	vmMemory(t, "VM memory before the nodes start")
	// Registered first, so it runs last: what the nodes leave behind for
	// the tests after this one in the same VM.
	t.Cleanup(func() {
		vmMemory(t, "VM memory after the nodes stopped")
	})
	bins, err := k8snode.BinariesFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	images := []string{os.Getenv("TLB_IMAGE_TAR"), os.Getenv("TLB_PAUSE_TAR")}
	envoyTar := os.Getenv("TLB_ENVOY_IMAGE_TAR")
	kustomize := os.Getenv("TLB_KUSTOMIZE")
	if images[0] == "" || images[1] == "" || envoyTar == "" || kustomize == "" {
		t.Fatal("TLB_IMAGE_TAR, TLB_PAUSE_TAR, TLB_ENVOY_IMAGE_TAR and TLB_KUSTOMIZE must be set: run through tools/lab-test.sh")
	}

	s, err := apiserver.Start(8 * time.Minute)
	if err != nil {
		t.Fatalf("start kube-apiserver and etcd in the VM: %v", err)
	}
	t.Cleanup(s.Stop)
	retries := 0
	s.OnRetry = func(what string, err error) {
		retries++
		t.Logf("the API server says retry: %s: %v", what, err)
	}
	t.Logf("kube-apiserver ready after %s", since(begin))
	kc, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	nodeAPI := k8snode.APIServer{Kubeconfig: s.Kubeconfig, CAFile: s.Config.CAFile, ServiceAccountKeyFile: s.ServiceAccountKeyFile}
	work := t.TempDir()
	cp, err := k8snode.StartControlPlane(bins, nodeAPI, filepath.Join(work, "control-plane"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)

	d := buildDC(t, 1)
	gw := d.gateways[0]
	backend := net.JoinHostPort(d.gatewayAddr[0], backendPort)
	// The Gateway API CRDs first, absent from this new cluster, as
	// install.sh installs them; then deploy/ with the site's one edit.
	objs := append(gatewayAPICRDs(t), buildInstall(t, kustomize)...)
	u, err := url.Parse(s.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	// Both nodes start at once: importing the images is most of it.
	nodeStart := time.Now()
	specs := []struct {
		tn     *topo.Node
		ip     string
		labels map[string]string
		images []string
	}{
		// The labels of the steps' kubectl label commands.
		{d.director, "198.18.1.2", map[string]string{"tlb.io/director": "true"}, images},
		{gw, d.gatewayAddr[0], map[string]string{"tlb.io/gateway": "true", "tlb.io/gateway-group": ""}, append([]string{envoyTar}, images...)},
	}
	nodes := make([]*k8snode.Node, len(specs))
	errs := make(chan error, len(specs))
	for i, spec := range specs {
		go func() {
			// Under TCG on a loaded host, importing the images alone has
			// taken over four minutes.
			ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
			defer cancel()
			var err error
			nodes[i], err = k8snode.Start(ctx, bins, nodeAPI, k8snode.Options{
				Name: spec.tn.Name, NetnsPath: spec.tn.NsPath(), Listen: spec.tn.Listen, NodeIP: spec.ip,
				PodCIDR: fmt.Sprintf("10.244.%d.0/24", i+1), Labels: spec.labels, APIServer: u.Host,
				Images: spec.images, SandboxImage: pauseImage, Dir: filepath.Join(work, "nodes"),
			})
			errs <- err
		}()
	}
	for range specs {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, n := range nodes {
		if n != nil {
			t.Cleanup(n.Stop)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("FIGURE node_images: both nodes' containerd running with their images imported %s after they started", since(nodeStart))
	diagnose := func() {
		if !t.Failed() {
			return
		}
		t.Logf("pods:\n%s", podTable(kc))
		for _, n := range nodes {
			t.Log(n.Logs())
			t.Log(n.PodLogs())
		}
		t.Log(cp.Logs())
	}
	t.Cleanup(diagnose)
	check := func() {
		t.Helper()
		for _, n := range nodes {
			if err := n.Check(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cp.Check(); err != nil {
			t.Fatal(err)
		}
	}
	// The images in each node's containerd are the ones make image built;
	// the gateway node has the Envoy image too.
	for i, n := range nodes {
		imgs, err := n.Images(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !contains(imgs, tlbImage) || !contains(imgs, pauseImage) || (i == 1) != contains(imgs, envoyImage) {
			t.Fatalf("node %s: containerd holds %v; want %s and %s imported (and %s on the gateway node only)", n.Name, imgs, tlbImage, pauseImage, envoyImage)
		}
	}
	for _, n := range nodes {
		waitFor(t, 5*time.Minute, "node "+n.Name+" registers and is Ready", func() bool {
			check()
			node, err := kc.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{})
			return err == nil && nodeReady(node)
		})
	}
	t.Logf("FIGURE node_start: both nodes Ready %s after their containerd and kubelet started", since(nodeStart))

	applied := time.Now()
	ctx := context.Background()
	// The custom resources of the build (GatewayClass tlb and its
	// GatewayClassConfig) can be created only once the build's CRDs are
	// served, as a second kubectl apply would create them; so can the
	// examples' L4Clusters and VIPPools.
	var first, custom []*unstructured.Unstructured
	for _, o := range objs {
		if g := o.GroupVersionKind().Group; g == "tlb.io" || g == "gateway.networking.k8s.io" {
			custom = append(custom, o)
		} else {
			first = append(first, o)
		}
	}
	if err := s.CreateAll(ctx, first); err != nil {
		t.Fatalf("apply the kustomize build of deploy/: %v", err)
	}
	createRedisSecret(t, kc)
	pools := readExamples(t, "pools.yaml")
	waitFor(t, 2*time.Minute, "the CRDs of deploy/ are served, its custom resources and deploy/examples/pools.yaml are created", func() bool {
		return s.CreateAll(ctx, custom) == nil && s.CreateAll(ctx, pools) == nil
	})
	// Under TCG the pods start slowly: the netd pod has taken over four
	// minutes to be Ready on an idle host.
	waitFor(t, 14*time.Minute, "the netd pod runs on "+gw.Name+" and is Ready through its readiness probe", func() bool {
		check()
		return readyPods(kc, "app.kubernetes.io/name=tlb-netd", gw.Name) == 1
	})
	t.Logf("the netd pod is Ready %s after deploy/ was applied", since(applied))
	// With no Service yet the director is Ready (IPVS programmed, nothing
	// to serve), so its rollout completes; it announces nothing until a
	// VIP has a healthy gateway.
	var why string
	waitFor(t, 8*time.Minute, "the director pod runs on "+d.director.Name+" and is Ready with no Service", func() bool {
		check()
		// The DaemonSet puts the obs listener on the node's IP (status.hostIP).
		why = readyz(d.director, "198.18.1.2:9100")
		return strings.HasPrefix(why, "200 ")
	})
	t.Logf("the director pod runs %s after deploy/ was applied; /readyz: %q", since(applied), why)
	// The Gateway controller's standby may flap on a loaded VM (its probes
	// time out); the leader is what the Gateway needs.
	waitFor(t, 8*time.Minute, "both ipam pods and a Gateway controller pod are Ready", func() bool {
		check()
		return readyPods(kc, "app.kubernetes.io/name=tlb-ipam", "") == 2 &&
			readyPods(kc, "app.kubernetes.io/name=tlb-gateway-controller", "") >= 1
	})
	t.Logf("FIGURE pods_ready: netd, both ipam pods and a Gateway controller Ready, the director running, %s after deploy/ was applied", since(applied))

	// deploy/examples' Service and Gateway as they are, the Gateway's
	// certificate, and the Service's backend (its pods are the user's).
	created := time.Now()
	if err := s.CreateAll(ctx, readExamples(t, "service.yaml", "gateway.yaml")); err != nil {
		t.Fatalf("apply deploy/examples/service.yaml and gateway.yaml: %v", err)
	}
	roots := createExampleCertificate(t, kc)
	serveBackend(t, gw, backend)
	createExampleEndpoints(t, kc, d.gatewayAddr[0], 8080)
	// A plain L4 Service (no l7) beside them, answered on the gateway
	// node itself: L4 through the director without Envoy.
	c := &cluster{server: s, kc: kc}
	c.mustCreateNamespace(t, "shop")
	c.createService(t, "shop", "web", map[string]string{api.AnnotationEnvironment: "production"})
	serviceVIP := waitAddress(t, "the example Service default/shop", created, func() string { return c.vipOf(t, "default", "shop") })
	gatewayAddr := waitAddress(t, "the example Gateway default/shop", created, func() string { return gatewayAddress(t, s, "default", "shop") })
	vip := waitAddress(t, "Service shop/web", created, func() string { return c.vipOf(t, "shop", "web") })
	target := net.JoinHostPort(vip, "80")
	serveWhoAmI(t, gw, target, "l4")
	waitFor(t, 3*time.Minute, "the director pod programs IPVS service "+target, func() bool {
		out, _ := d.director.Cmd("ipvsadm", "-Ln", "-t", target).CombinedOutput()
		return strings.Contains(string(out), d.gatewayAddr[0]+":80")
	})
	t.Logf("IPVS service %s in the director's node after %s", target, since(created))
	waitFor(t, 3*time.Minute, "the netd pod binds "+vip+" on tunl0 of "+gw.Name, func() bool {
		out, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
		return strings.Contains(string(out), vip+"/32")
	})
	t.Logf("VIP bound by the netd pod after %s", since(created))
	// The gateway's weight follows its Envoy's /ready (the director's
	// health: section): the gateway pod may still be starting. GTM says
	// up once it is.
	waitFor(t, 10*time.Minute, "the director pod is Ready and its GTM answer for "+vip+" is up (a healthy gateway)", func() bool {
		check()
		hc := d.director.HTTPClient()
		hc.Timeout = 5 * time.Second
		resp, err := hc.Get("http://198.18.1.2:9100/vip/" + vip)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK && readyPods(kc, "app.kubernetes.io/name=tlb-director", d.director.Name) == 1
	})
	t.Logf("the director pod is Ready with a healthy gateway %s after the Service was created", since(created))
	bctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if _, _, err := d.bird.WaitRoutes(bctx, examplePool, 3*time.Minute, func(rs []birdlab.Route) bool {
		return len(rs) == 1 && rs[0].NextHop == "198.18.1.2"
	}); err != nil {
		t.Fatalf("the router learns %s from the director pod: %v", examplePool, err)
	}
	t.Logf("route to %s in BIRD after %s", examplePool, since(created))
	waitFor(t, 2*time.Minute, "the client reaches "+target, func() bool {
		_, err := get(d.client, target)
		return err == nil
	})
	t.Logf("FIGURE service_first_answer: first answer through the VIP %s after the Service was created", since(created))
	served := countAnswers(t, d, target, 10)
	if served[gw.Name+"/l4"] != 10 {
		t.Errorf("10 connections to %s answered %v; want all by %s", target, served, gw.Name)
	}
	var in, out int
	waitFor(t, 30*time.Second, "IPVS counts the requests to "+target, func() bool {
		in, out = ipvsPackets(t, d.director, target)
		return in > 0
	})
	if out != 0 {
		t.Errorf("IPVS counters of %s: InPkts %d OutPkts %d; want no replies through the director (DSR)", target, in, out)
	}
	// The pods did their work through the mounted /proc/sys/net: the
	// sysctls the director and netd own are set in their nodes.
	for _, sc := range []struct {
		n interface {
			Cmd(string, ...string) *exec.Cmd
		}
		key, val string
	}{
		{d.director, "net.ipv4.vs.sloppy_tcp", "1"},
		{gw, "net.ipv4.conf.all.arp_ignore", "1"},
		{gw, "net.ipv4.conf.tunl0.rp_filter", "2"},
	} {
		got, _ := sc.n.Cmd("sysctl", "-n", sc.key).CombinedOutput()
		if strings.TrimSpace(string(got)) != sc.val {
			t.Errorf("%s = %q; want %s, set by the pod", sc.key, strings.TrimSpace(string(got)), sc.val)
		}
	}
	checkGatewayPod(t, kc, d, nodes[1], roots, serviceVIP, gatewayAddr, applied)
	for _, sel := range []string{"app.kubernetes.io/name=tlb-director", "app.kubernetes.io/name=tlb-netd", "app.kubernetes.io/name=tlb-ipam", "app.kubernetes.io/name=tlb-gateway-controller", "app.kubernetes.io/name=tlb-l7", "app.kubernetes.io/name=tlb-gateway"} {
		if r := restarts(kc, sel); r != 0 {
			t.Errorf("pods %s restarted %d times", sel, r)
		}
	}
	netdWithoutSysctlDir(t, kc, d, nodes[1], check)
	upgradeFromPrevious(t, s, kc, d, nodes, roots, serviceVIP, gatewayAddr, kustomize, check)
	t.Logf("FIGURE apply_retries: %d requests sent again because the API server said retry", retries)
	t.Logf("whole test %s", since(begin))
}
