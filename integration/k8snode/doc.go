// Package k8snode runs real Kubernetes nodes in the lab VM, so that the
// manifests of deploy/ run in real pods: per node, containerd (built from
// its Go module, with Debian's runc and CNI plugins) and a kubelet (built
// from k8s.io/kubernetes) inside one network namespace of the lab topology
// (integration/topo), and once per cluster the controllers that turn
// Deployments and DaemonSets into scheduled pods (kube-controller-manager,
// kube-scheduler) next to the API server of integration/k8s/apiserver.
//
// A node's host network namespace is its topo node: hostNetwork pods (the
// director, netd) live there, other pods get addresses on a CNI bridge in
// it. There is no kube-proxy: the API server's Service address
// (10.96.0.1:443, what in-cluster clients dial) is a local address of each
// node with a relay to the API server behind it, and no test Service
// needs a ClusterIP.
//
// It owns the processes it starts, a tmpfs per node, the node's cgroup
// (/sys/fs/cgroup/tlb-node-NAME) and everything under them; Stop kills
// every process of that cgroup.
package k8snode
