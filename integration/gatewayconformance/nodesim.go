package gatewayconformance

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// NodeSim stands in for a kubelet: it registers one Ready Node, binds
// every unscheduled Pod to it, reports each of its Pods Running and Ready
// with a Pod IP of its own range, and finishes the deletion of its Pods
// (what a kubelet does once the containers are gone), so namespaces the
// suite deletes do not hang. With a PodRunner (WithPods) the Pods' containers
// run before a Pod is reported Ready and stop when it goes; without one no
// container runs and the Pods exist only in the API server.
type NodeSim struct {
	client kubernetes.Interface
	node   string
	log    *slog.Logger
	now    func() time.Time

	pods        PodRunner // nil: no container runs
	kubeletPort int32     // the simulated kubelet's port, 0 for none

	next netip.Addr // the next Pod IP; only the worker goroutine touches it
}

// PodRunner runs the containers of the simulated node's Pods.
type PodRunner interface {
	// Run starts pod's containers with Pod IP ip and returns once they
	// serve; a Pod already running is left alone.
	Run(ctx context.Context, pod *corev1.Pod, ip netip.Addr) error
	// Stop ends the containers of the Pod namespace/name, if any.
	Stop(key string)
}

// WithPods runs the Pods' containers with r.
func (s *NodeSim) WithPods(r PodRunner) *NodeSim {
	s.pods = r
	return s
}

// WithKubelet registers port (on the node's address, 127.0.0.1) as the
// node's kubelet endpoint, where the API server asks for Pod logs.
func (s *NodeSim) WithKubelet(port int32) *NodeSim {
	s.kubeletPort = port
	return s
}

// NewNodeSim returns a simulator for the node named node; Pod IPs come
// from podCIDR (a /16 is plenty).
func NewNodeSim(client kubernetes.Interface, node string, podCIDR netip.Prefix, log *slog.Logger, now func() time.Time) *NodeSim {
	return &NodeSim{client: client, node: node, log: log, now: now, next: podCIDR.Masked().Addr().Next()}
}

// Run registers the node and simulates it until ctx ends.
func (s *NodeSim) Run(ctx context.Context) error {
	if err := s.register(ctx); err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(s.client, 0)
	pods := factory.Core().V1().Pods()
	// Retries at most a second apart: a Pod waits for the Secrets it
	// mounts, which the suite makes right after the Pods.
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Second))
	defer queue.ShutDown()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), pods.Informer().HasSynced) {
		return ctx.Err()
	}
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	for {
		key, quit := queue.Get()
		if quit {
			return nil
		}
		ns, name, _ := cache.SplitMetaNamespaceKey(key)
		pod, err := pods.Lister().Pods(ns).Get(name)
		switch {
		case err == nil:
			// A failure, even a NotFound (a Secret the Pod mounts, not
			// made yet), is retried: a Pod gone is the lister's NotFound.
			err = s.sync(ctx, pod)
		case apierrors.IsNotFound(err):
			if s.pods != nil {
				s.pods.Stop(key)
			}
			err = nil
		}
		if err != nil && ctx.Err() == nil {
			if n := queue.NumRequeues(key); n%10 == 0 {
				s.log.Warn("simulate pod", "pod", key, "retries", n, "err", err)
			}
			queue.AddRateLimited(key)
		} else {
			queue.Forget(key)
		}
		queue.Done(key)
	}
}

// register creates the Node and reports it Ready.
func (s *NodeSim) register(ctx context.Context) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.node, Labels: map[string]string{"kubernetes.io/hostname": s.node}}}
	got, err := s.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create node %s: %w", s.node, err)
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("1000"),
	}
	now := metav1.NewTime(s.now())
	got.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "simulated by the conformance harness", LastHeartbeatTime: now, LastTransitionTime: now,
		}},
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: s.kubeletPort}},
	}
	if _, err := s.client.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("report node %s Ready: %w", s.node, err)
	}
	return nil
}

// sync moves one Pod a step: bind it, report it Ready, or finish its
// deletion.
func (s *NodeSim) sync(ctx context.Context, pod *corev1.Pod) error {
	switch {
	case pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil:
		b := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: s.node},
		}
		if err := s.client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("bind pod %s/%s to %s: %w", pod.Namespace, pod.Name, s.node, err)
		}
		return nil
	case pod.Spec.NodeName != s.node:
		return nil
	case pod.DeletionTimestamp != nil:
		if s.pods != nil {
			s.pods.Stop(pod.Namespace + "/" + pod.Name)
		}
		zero := int64(0)
		err := s.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &pod.UID},
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("finish deleting pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		return nil
	case podReady(pod):
		return nil
	}
	p := pod.DeepCopy()
	ip := s.podIP(p)
	if s.pods != nil {
		if err := s.pods.Run(ctx, p, ip); err != nil {
			return err
		}
	}
	p.Status = s.readyStatus(p, ip)
	if _, err := s.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("report pod %s/%s Ready: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// podIP is the IP the Pod has, else the next free one.
func (s *NodeSim) podIP(pod *corev1.Pod) netip.Addr {
	if ip, err := netip.ParseAddr(pod.Status.PodIP); err == nil {
		return ip
	}
	ip := s.next
	s.next = s.next.Next()
	return ip
}

// readyStatus is the status of a Pod whose containers all run and are
// ready, with Pod IP podIP.
func (s *NodeSim) readyStatus(pod *corev1.Pod, podIP netip.Addr) corev1.PodStatus {
	now := metav1.NewTime(s.now())
	ip := podIP.String()
	st := corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    "127.0.0.1",
		HostIPs:   []corev1.HostIP{{IP: "127.0.0.1"}},
		PodIP:     ip,
		PodIPs:    []corev1.PodIP{{IP: ip}},
		StartTime: &now,
		QOSClass:  pod.Status.QOSClass,
	}
	for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, c := range pod.Spec.Containers {
		started := true
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: &started,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return st
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
