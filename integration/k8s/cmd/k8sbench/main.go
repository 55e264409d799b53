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
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "k8sbench:", err)
		os.Exit(1)
	}
}

func run() error {
	n := flag.Int("services", 1000, "Services to create at once")
	repo := flag.String("repo", ".", "repository root (for deploy/crds)")
	ipamBin := flag.String("ipam", os.Getenv("TLB_IPAM_BIN"), "ipam controller binary")
	extra := flag.String("ipam-args", "", "extra flags for the controller, space-separated")
	allocs := flag.Int("allocations", 20000, "allocations timed in one /16 of one allocator (0: skip)")
	l7Bin := flag.String("l7", os.Getenv("TLB_L7_BIN"), "l7 binary for the Gateway API part (empty: skip it)")
	gateways := flag.Int("gateways", 50, "Gateways of the Gateway API part")
	routes := flag.Int("routes", 500, "HTTPRoutes of the Gateway API part, spread over the Gateways")
	flag.Parse()
	if *ipamBin == "" {
		return fmt.Errorf("no controller binary: set -ipam or TLB_IPAM_BIN")
	}
	var bench []string
	if *allocs > 0 {
		took, err := benchAllocator(*allocs)
		if err != nil {
			return fmt.Errorf("allocator benchmark: %w", err)
		}
		fmt.Printf("allocator: %d allocations in one /16 in %s (reference before the bitmap: %s)\n", *allocs, took.Round(time.Microsecond), allocReference)
		bench = append(bench, fmt.Sprintf("BENCH ipam_%d_allocations_s %.3f s", *allocs, took.Seconds()))
	}

	t0 := time.Now()
	srv, err := apiserver.StartWithCRDs(3*time.Minute, filepath.Join(*repo, "deploy", "crds"))
	if err != nil {
		return err
	}
	defer srv.Stop()
	fmt.Printf("kube-apiserver + etcd ready (CRDs installed) in %s\n", time.Since(t0).Round(time.Millisecond))
	ctx := context.Background()
	cfg := *srv.Config
	cfg.QPS, cfg.Burst = 1000, 2000
	kc, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(&cfg)
	if err != nil {
		return err
	}
	// Two L4 clusters of the default capacity with a /22 each: room for
	// 2,000 VIPs, so the scheduler spreads 1,000 over both.
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
	ns := "bench"
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}

	metricsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	args := []string{"--kubeconfig=" + srv.Kubeconfig, "--leader-elect=false", "--default-environment=bench", "--metrics-addr=" + metricsAddr}
	args = append(args, strings.Fields(*extra)...)
	ctrl := exec.Command(*ipamBin, args...)
	logf, err := os.Create(filepath.Join(srv.Dir, "ipam.log"))
	if err != nil {
		return err
	}
	ctrl.Stdout, ctrl.Stderr = logf, logf
	ctrl.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := ctrl.Start(); err != nil {
		return fmt.Errorf("start controller: %w", err)
	}
	defer func() { _ = ctrl.Process.Kill(); _, _ = ctrl.Process.Wait() }()
	if err := waitHTTP("http://"+metricsAddr+"/readyz", 30*time.Second); err != nil {
		return fmt.Errorf("controller not ready: %w", err)
	}
	fmt.Printf("controller: %s %s\n", *ipamBin, strings.Join(args[1:], " "))

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, *n)
	sem := make(chan struct{}, 50)
	for i := range *n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			_, err := kc.CoreV1().Services(ns).Create(ctx, service(ns, fmt.Sprintf("svc-%04d", i)), metav1.CreateOptions{})
			errs <- err
		})
	}
	wg.Wait()
	created := time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			return fmt.Errorf("create Service: %w", err)
		}
	}
	fmt.Printf("%d Services created in %s\n", *n, created.Round(time.Millisecond))

	var done time.Duration
	var vips map[netip.Addr]string
	deadline := time.Now().Add(10 * time.Minute)
	for {
		list, err := kc.CoreV1().Services(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return err
		}
		vips = map[netip.Addr]string{}
		for _, s := range list.Items {
			for _, in := range s.Status.LoadBalancer.Ingress {
				if a, err := netip.ParseAddr(in.IP); err == nil {
					if prev, dup := vips[a]; dup {
						return fmt.Errorf("VIP %s given to both %s and %s", a, prev, s.Name)
					}
					vips[a] = s.Name
				}
			}
		}
		if len(vips) == *n {
			done = time.Since(start)
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d Services allocated after 10 minutes", len(vips), *n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	rss, err := peakRSS(ctrl.Process.Pid)
	if err != nil {
		return err
	}
	cpu, err := cpuSeconds(ctrl.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("all %d Services have distinct VIPs in status after %s, %s after the last was created\n",
		*n, done.Round(time.Millisecond), (done - created).Round(time.Millisecond))
	fmt.Printf("reference before one write per Service and 200 QPS: 48.6 s (creation 10.5 s)\n")
	bench = append(bench,
		fmt.Sprintf("BENCH k8s_%d_services_allocated_s %.2f s", *n, done.Seconds()),
		fmt.Sprintf("BENCH k8s_%d_services_allocated_after_created_s %.2f s", *n, (done-created).Seconds()),
		fmt.Sprintf("BENCH k8s_controller_rss_mib %.1f MiB", rss),
		fmt.Sprintf("BENCH k8s_controller_cpu_s %.2f s", cpu))
	if *l7Bin != "" {
		line, err := gatewayBench{l7Bin: *l7Bin, gateways: *gateways, routes: *routes}.run(ctx, srv, &cfg, kc, dc)
		if err != nil {
			return fmt.Errorf("the Gateway API part: %w", err)
		}
		bench = append(bench, line)
	}
	for _, b := range bench {
		fmt.Println(b)
	}
	return nil
}

func service(ns, name string) *corev1.Service {
	class := api.LoadBalancerClass
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class,
			Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Port: 80}},
			AllocateLoadBalancerNodePorts: new(false),
		},
	}
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
