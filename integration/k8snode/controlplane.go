package k8snode

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ControlPlane is kube-controller-manager and kube-scheduler beside an API
// server: what turns Deployments and DaemonSets into pods bound to nodes,
// and publishes the kube-root-ca.crt ConfigMap the pods' service account
// volumes take their CA from.
type ControlPlane struct {
	dir                string
	controllers, sched *process
}

// APIServer is what the control plane and the kubelets need of the API
// server (integration/k8s/apiserver.Server has it).
type APIServer struct {
	// Kubeconfig is a cluster-admin kubeconfig file.
	Kubeconfig string
	// CAFile is the CA bundle of the API server's serving certificate.
	CAFile string
	// ServiceAccountKeyFile is the key that signs service account tokens.
	ServiceAccountKeyFile string
}

// StartControlPlane starts both in the VM's root network namespace, with
// their logs in dir.
func StartControlPlane(b Binaries, api APIServer, dir string) (*ControlPlane, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cp := &ControlPlane{dir: dir}
	var err error
	cp.controllers, err = spawn(dir, "kube-controller-manager", "", nil, b.ControllerManager,
		"--kubeconfig="+api.Kubeconfig, "--leader-elect=false", "--secure-port=0",
		"--root-ca-file="+api.CAFile, "--service-account-private-key-file="+api.ServiceAccountKeyFile,
		// Pod networking is the nodes' CNI bridges; no node CIDRs, no
		// cloud.
		"--allocate-node-cidrs=false", "--v=1")
	if err != nil {
		return nil, err
	}
	cp.sched, err = spawn(dir, "kube-scheduler", "", nil, b.Scheduler,
		"--kubeconfig="+api.Kubeconfig, "--leader-elect=false", "--secure-port=0", "--v=1")
	if err != nil {
		cp.Stop()
		return nil, err
	}
	return cp, nil
}

// Check reports an error when either has exited.
func (cp *ControlPlane) Check() error {
	for _, p := range []*process{cp.controllers, cp.sched} {
		if err := p.running(); err != nil {
			return err
		}
	}
	return nil
}

// Logs are the tails of both logs, for a failing test.
func (cp *ControlPlane) Logs() string {
	return fmt.Sprintf("--- kube-controller-manager ---\n%s\n--- kube-scheduler ---\n%s\n  (full logs in %s)",
		cp.controllers.tail(30), cp.sched.tail(30), filepath.Clean(cp.dir))
}

// Stop ends both.
func (cp *ControlPlane) Stop() {
	cp.sched.stop(10 * time.Second)
	cp.controllers.stop(10 * time.Second)
}
