// Command k8sbench measures the ipam allocator and controller: first
// 20,000 allocations in one /16 of one allocator (no API server), then,
// against a real kube-apiserver + etcd, 1,000 LoadBalancer Services created
// at once, the time until every one has a VIP in its status, and the
// controller's peak RSS; then, with -l7, 500 HTTPRoutes on 50 Gateways
// created at once and the time until the Gateway API controller has
// Accepted every Route and every Gateway is Programmed (its VIP from the
// same ipam controller). It ends with BENCH lines. Run it through
// tools/bench-k8s.sh, which provides the binaries.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "k8sbench:", err)
		os.Exit(1)
	}
}

// options are the benchmark's flags.
type options struct {
	services    int
	repo        string
	ipamBin     string
	ipamArgs    string
	allocations int
	l7Bin       string
	gateways    int
	routes      int
}

// parseFlags reads the options from the command line.
func parseFlags() options {
	var o options
	flag.IntVar(&o.services, "services", 1000, "Services to create at once")
	flag.StringVar(&o.repo, "repo", ".", "repository root (for deploy/crds)")
	flag.StringVar(&o.ipamBin, "ipam", os.Getenv("TLB_IPAM_BIN"), "ipam controller binary")
	flag.StringVar(&o.ipamArgs, "ipam-args", "", "extra flags for the controller, space-separated")
	flag.IntVar(&o.allocations, "allocations", 20000, "allocations timed in one /16 of one allocator (0: skip)")
	flag.StringVar(&o.l7Bin, "l7", os.Getenv("TLB_L7_BIN"), "l7 binary for the Gateway API part (empty: skip it)")
	flag.IntVar(&o.gateways, "gateways", 50, "Gateways of the Gateway API part")
	flag.IntVar(&o.routes, "routes", 500, "HTTPRoutes of the Gateway API part, spread over the Gateways")
	flag.Parse()
	return o
}

// run runs each part the options ask for and prints their BENCH lines.
func run() error {
	o := parseFlags()
	if o.ipamBin == "" {
		return fmt.Errorf("no controller binary: set -ipam or TLB_IPAM_BIN")
	}
	var bench []string
	if o.allocations > 0 {
		line, err := allocatorPart(o.allocations)
		if err != nil {
			return err
		}
		bench = append(bench, line)
	}
	lines, err := apiServerParts(o)
	if err != nil {
		return err
	}
	for _, b := range append(bench, lines...) {
		fmt.Println(b)
	}
	return nil
}

// allocatorPart times n allocations in one allocator and returns its
// BENCH line.
func allocatorPart(n int) (string, error) {
	took, err := benchAllocator(n)
	if err != nil {
		return "", fmt.Errorf("allocator benchmark: %w", err)
	}
	fmt.Printf("allocator: %d allocations in one /16 in %s (reference before the bitmap: %s)\n", n, took.Round(time.Microsecond), allocReference)
	return fmt.Sprintf("BENCH ipam_%d_allocations_s %.3f s", n, took.Seconds()), nil
}

// apiServerParts runs the parts against a real API server: the ipam
// controller's Services, then, with an l7 binary, the Gateway API part
// (whose Gateways get their VIPs from the same ipam controller).
func apiServerParts(o options) ([]string, error) {
	t0 := time.Now()
	srv, err := apiserver.StartWithCRDs(3*time.Minute, filepath.Join(o.repo, "deploy", "crds"))
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	fmt.Printf("kube-apiserver + etcd ready (CRDs installed) in %s\n", time.Since(t0).Round(time.Millisecond))
	ctx := context.Background()
	cfg := *srv.Config
	cfg.QPS, cfg.Burst = 1000, 2000
	kc, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfig(&cfg)
	if err != nil {
		return nil, err
	}
	ns := "bench"
	if err := createPools(ctx, dc); err != nil {
		return nil, err
	}
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	ctrl, err := startIPAM(srv, o)
	if err != nil {
		return nil, err
	}
	defer ctrl.stop()
	bench, err := servicesPart(ctx, kc, ns, o.services, ctrl.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	if o.l7Bin != "" {
		line, err := gatewayBench{l7Bin: o.l7Bin, gateways: o.gateways, routes: o.routes}.run(ctx, srv, &cfg, kc, dc)
		if err != nil {
			return nil, fmt.Errorf("the Gateway API part: %w", err)
		}
		bench = append(bench, line)
	}
	return bench, nil
}

// createPools creates two L4 clusters of the default capacity with a /22
// each: room for 2,000 VIPs, so the scheduler spreads 1,000 over both.
func createPools(ctx context.Context, dc dynamic.Interface) error {
	for i, cidr := range []string{"198.18.4.0/22", "198.18.8.0/22"} {
		name := fmt.Sprintf("bench-%d", i)
		if err := create(ctx, dc, v1alpha1.L4ClusterResource, &v1alpha1.L4Cluster{
			TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "L4Cluster"}, ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.L4ClusterSpec{Environment: "bench"},
		}); err != nil {
			return err
		}
		if err := create(ctx, dc, v1alpha1.VIPPoolResource, &v1alpha1.VIPPool{
			TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"}, ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.VIPPoolSpec{L4Cluster: name, CIDRs: []string{cidr}},
		}); err != nil {
			return err
		}
	}
	return nil
}

// startIPAM starts the ipam controller on srv, with the options' extra
// flags, and waits until it is ready.
func startIPAM(srv *apiserver.Server, o options) (*child, error) {
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"--kubeconfig=" + srv.Kubeconfig, "--leader-elect=false", "--default-environment=bench", "--metrics-addr=" + metricsAddr}
	args = append(args, strings.Fields(o.ipamArgs)...)
	ctrl, err := startChild("controller", o.ipamBin, args, filepath.Join(srv.Dir, "ipam.log"), "http://"+metricsAddr+"/readyz")
	if err != nil {
		return nil, err
	}
	fmt.Printf("controller: %s %s\n", o.ipamBin, strings.Join(args[1:], " "))
	return ctrl, nil
}

func create(ctx context.Context, dc dynamic.Interface, gvr schema.GroupVersionResource, obj any) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	_, err = dc.Resource(gvr).Create(ctx, &unstructured.Unstructured{Object: m}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create %s: %w", gvr.Resource, err)
	}
	return nil
}

// peakRSS reads VmHWM (peak resident set) of pid, in MiB.
func peakRSS(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read controller memory: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// cpuSeconds reads the user and system CPU time pid has used, in seconds
// (fields 14 and 15 of /proc/<pid>/stat, in clock ticks of 1/100 s).
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read controller CPU time: %w", err)
	}
	// The command name (field 2) may hold spaces; count from after it.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse /proc/%d/stat: %q %q", pid, f[11], f[12])
	}
	return (utime + stime) / 100, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

func waitHTTP(url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not OK after %s", url, timeout)
}
