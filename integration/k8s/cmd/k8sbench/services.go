package main

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
)

// servicesPart creates n LoadBalancer Services in ns at once and returns
// the BENCH lines of the time until every one has a distinct VIP in its
// status, and of the peak RSS and CPU time of the ipam controller
// (process ctrlPID).
func servicesPart(ctx context.Context, kc kubernetes.Interface, ns string, n, ctrlPID int) ([]string, error) {
	start := time.Now()
	creates := make([]func() error, n)
	for i := range creates {
		creates[i] = func() error {
			_, err := kc.CoreV1().Services(ns).Create(ctx, service(ns, fmt.Sprintf("svc-%04d", i)), metav1.CreateOptions{})
			return err
		}
	}
	if err := createAtOnce(creates); err != nil {
		return nil, fmt.Errorf("create Service: %w", err)
	}
	created := time.Since(start)
	fmt.Printf("%d Services created in %s\n", n, created.Round(time.Millisecond))
	if err := waitAllocated(ctx, kc, ns, n); err != nil {
		return nil, err
	}
	done := time.Since(start)
	rss, err := peakRSS(ctrlPID)
	if err != nil {
		return nil, err
	}
	cpu, err := cpuSeconds(ctrlPID)
	if err != nil {
		return nil, err
	}
	fmt.Printf("all %d Services have distinct VIPs in status after %s, %s after the last was created\n",
		n, done.Round(time.Millisecond), (done - created).Round(time.Millisecond))
	fmt.Printf("reference before one write per Service and 200 QPS: 48.6 s (creation 10.5 s)\n")
	return []string{
		fmt.Sprintf("BENCH k8s_%d_services_allocated_s %.2f s", n, done.Seconds()),
		fmt.Sprintf("BENCH k8s_%d_services_allocated_after_created_s %.2f s", n, (done - created).Seconds()),
		fmt.Sprintf("BENCH k8s_controller_rss_mib %.1f MiB", rss),
		fmt.Sprintf("BENCH k8s_controller_cpu_s %.2f s", cpu),
	}, nil
}

// waitAllocated polls the Services of ns until n of them have a VIP in
// status; it fails at once when two share a VIP, and after 10 minutes.
func waitAllocated(ctx context.Context, kc kubernetes.Interface, ns string, n int) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		list, err := kc.CoreV1().Services(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return err
		}
		vips, err := distinctVIPs(list.Items)
		if err != nil {
			return err
		}
		if vips == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d Services allocated after 10 minutes", vips, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// distinctVIPs counts the VIPs in the Services' status, or fails naming
// two Services given the same one.
func distinctVIPs(svcs []corev1.Service) (int, error) {
	vips := map[netip.Addr]string{}
	for _, s := range svcs {
		for _, in := range s.Status.LoadBalancer.Ingress {
			if a, err := netip.ParseAddr(in.IP); err == nil {
				if prev, dup := vips[a]; dup {
					return 0, fmt.Errorf("VIP %s given to both %s and %s", a, prev, s.Name)
				}
				vips[a] = s.Name
			}
		}
	}
	return len(vips), nil
}

// service is a LoadBalancer Service of the ipam class, without node ports.
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
