package k8snode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Options describe one node.
type Options struct {
	// Name is the node's name.
	Name string
	// NetnsPath is the network namespace the node's host network is
	// (topo.Node.NsPath).
	NetnsPath string
	// Listen opens a listener inside that namespace (topo.Node.Listen).
	Listen func(network, addr string) (net.Listener, error)
	// NodeIP is the node's InternalIP, an address of the namespace.
	NodeIP string
	// PodCIDR is the subnet of the node's CNI bridge (10.244.N.0/24).
	PodCIDR string
	// Labels are the node's labels (kubelet --node-labels).
	Labels map[string]string
	// APIServer is host:port of the API server in the VM's root
	// namespace (loopback): the kubelet dials the same address inside the
	// node, which relays it.
	APIServer string
	// ServiceIP is the API server's Service address that in-cluster
	// clients dial on port 443 (default 10.96.0.1).
	ServiceIP string
	// Images are docker-archive tarballs imported into containerd before
	// the kubelet starts; SandboxImage names the pause image among them.
	Images       []string
	SandboxImage string
	// Dir is where the node's directory (a tmpfs) is made.
	Dir string
}

// Node is a running containerd and kubelet.
type Node struct {
	Name string
	// Dir holds the node's state and logs.
	Dir    string
	cgroup string
	sock   string
	ctr    string
	relays []*relay
	procs  []*process // containerd, kubelet
}

const cgroupFS = "/sys/fs/cgroup"

// Start brings the node up: its directory and cgroup, the relays to the
// API server, containerd with the images imported, then the kubelet. It
// does not wait for the node to register; callers wait for its Ready
// condition through the API server.
func Start(ctx context.Context, b Binaries, api APIServer, o Options) (_ *Node, err error) {
	if o.ServiceIP == "" {
		o.ServiceIP = "10.96.0.1"
	}
	n := &Node{Name: o.Name, Dir: filepath.Join(o.Dir, o.Name), cgroup: filepath.Join(cgroupFS, "tlb-node-"+o.Name), ctr: b.Ctr}
	defer func() {
		if err != nil {
			err = fmt.Errorf("node %s: %w%s", o.Name, err, n.Logs())
			n.Stop()
		}
	}()
	if err := os.MkdirAll(n.Dir, 0o700); err != nil {
		return nil, err
	}
	// containerd's overlayfs snapshots cannot live on the VM's overlay
	// root: the node's state is on a tmpfs of its own.
	if err := syscall.Mount("tmpfs", n.Dir, "tmpfs", 0, "mode=0700,size=3g"); err != nil {
		return nil, fmt.Errorf("mount a tmpfs on %s: %w", n.Dir, err)
	}
	if err := n.makeCgroup(); err != nil {
		return nil, err
	}
	if err := n.startRelays(o); err != nil {
		return nil, err
	}
	if err := n.startContainerd(ctx, b, o); err != nil {
		return nil, err
	}
	for _, img := range o.Images {
		if err := n.ImportImage(ctx, img); err != nil {
			return nil, err
		}
	}
	if err := n.startKubelet(b, api, o); err != nil {
		return nil, err
	}
	return n, nil
}

// makeCgroup makes the node's cgroup with every controller delegated, and
// a leaf "runtime" for containerd, its shims and the kubelet; the kubelet
// puts the pods under the node's cgroup (its cgroupRoot).
func (n *Node) makeCgroup() error {
	ctrls, err := os.ReadFile(filepath.Join(cgroupFS, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("read the cgroup v2 controllers (is cgroup2 mounted on %s?): %w", cgroupFS, err)
	}
	var enable []string
	for _, c := range strings.Fields(string(ctrls)) {
		enable = append(enable, "+"+c)
	}
	for _, dir := range []string{cgroupFS, n.cgroup} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("make cgroup %s: %w", dir, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.Join(enable, " ")), 0o644); err != nil {
			return fmt.Errorf("enable controllers %v in %s: %w", enable, dir, err)
		}
	}
	return os.MkdirAll(filepath.Join(n.cgroup, "runtime"), 0o755)
}

// join moves a process into the node's runtime cgroup.
func (n *Node) join(p *process) error {
	return os.WriteFile(filepath.Join(n.cgroup, "runtime", "cgroup.procs"), []byte(fmt.Sprint(p.cmd.Process.Pid)), 0o644)
}

// startRelays makes the API server reachable inside the node at the
// address of the kubeconfig (loopback) and at the Service address.
func (n *Node) startRelays(o Options) error {
	if out, err := exec.Command("nsenter", "--net="+o.NetnsPath, "--", "ip", "addr", "add", o.ServiceIP+"/32", "dev", "lo").CombinedOutput(); err != nil {
		return fmt.Errorf("add %s to lo: %w: %s", o.ServiceIP, err, out)
	}
	for _, addr := range []string{o.APIServer, net.JoinHostPort(o.ServiceIP, "443")} {
		ln, err := o.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("relay for the API server on %s: %w", addr, err)
		}
		n.relays = append(n.relays, startRelay(ln, o.APIServer))
	}
	return nil
}

func (n *Node) startContainerd(ctx context.Context, b Binaries, o Options) error {
	n.sock = filepath.Join(n.Dir, "run", "containerd.sock")
	cniConf := filepath.Join(n.Dir, "cni")
	if err := os.MkdirAll(cniConf, 0o755); err != nil {
		return err
	}
	// The bridge's first address is the pods' gateway; nothing masquerades
	// (the pods reach only node-local addresses).
	conflist := fmt.Sprintf(`{"cniVersion": "1.0.0", "name": "tlb-lab", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": %q, "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}}
]}
`, filepath.Join(n.Dir, "cni-ipam"), o.PodCIDR)
	if err := os.WriteFile(filepath.Join(cniConf, "10-tlb-lab.conflist"), []byte(conflist), 0o644); err != nil {
		return err
	}
	cfg := fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[plugins.'io.containerd.nri.v1.nri']
  disable = true
[plugins.'io.containerd.internal.v1.opt']
  path = %[5]q
[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = %[6]q
[plugins.'io.containerd.cri.v1.runtime']
  # No apparmor_parser in the lab VM to load containerd's default profile.
  disable_apparmor = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = 'io.containerd.runc.v2'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
      BinaryName = %[7]q
      Root = %[8]q
      SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [%[9]q]
    conf_dir = %[10]q
`, filepath.Join(n.Dir, "containerd"), filepath.Join(n.Dir, "run"), n.sock, n.sock+".ttrpc",
		filepath.Join(n.Dir, "opt"), o.SandboxImage, b.Runc, filepath.Join(n.Dir, "runc"), b.CNIDir, cniConf)
	cfgPath := filepath.Join(n.Dir, "containerd.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	p, err := spawn(n.Dir, "containerd", o.NetnsPath, []string{"PATH=" + b.ShimDir + ":" + os.Getenv("PATH")},
		b.Containerd, "--config", cfgPath)
	if err != nil {
		return err
	}
	n.procs = append(n.procs, p)
	if err := n.join(p); err != nil {
		return fmt.Errorf("move containerd into the node's cgroup: %w", err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if err := p.running(); err != nil {
			return err
		}
		if exec.CommandContext(ctx, b.Ctr, "--address", n.sock, "version").Run() == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd does not answer on %s after 3m; its log:\n%s", n.sock, p.tail(30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ImportImage imports a docker-archive into the namespace the kubelet's
// pods use (k8s.io), unpacked for the overlayfs snapshotter. Start imports
// Options.Images; a test imports what it needs later (an image only an
// upgrade step runs) while the node works.
func (n *Node) ImportImage(ctx context.Context, tarball string) error {
	out, err := exec.CommandContext(ctx, n.ctr, "--address", n.sock, "-n", "k8s.io", "images", "import",
		"--snapshotter", "overlayfs", tarball).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import %s: %w: %s", tarball, err, out)
	}
	return nil
}

// TagImage gives image src, already in containerd's k8s.io namespace,
// the name dst too (ctr images tag), as if a registry served it under
// both: a pod template that changes only its image name then rolls.
func (n *Node) TagImage(ctx context.Context, src, dst string) error {
	out, err := exec.CommandContext(ctx, n.ctr, "--address", n.sock, "-n", "k8s.io", "images", "tag", "--force", src, dst).CombinedOutput()
	if err != nil {
		return fmt.Errorf("node %s: ctr images tag %s %s: %w: %s", n.Name, src, dst, err, out)
	}
	return nil
}

// Images lists the image names in containerd's k8s.io namespace.
func (n *Node) Images(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, n.ctr, "--address", n.sock, "-n", "k8s.io", "images", "list", "-q").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("ctr images list: %w: %s", err, out)
	}
	return strings.Fields(string(out)), nil
}

func (n *Node) startKubelet(b Binaries, api APIServer, o Options) error {
	root := filepath.Join(n.Dir, "kubelet")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupRoot: %q
containerRuntimeEndpoint: unix://%s
address: %s
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
failSwapOn: false
resolvConf: ""
# The VM's memory and tmpfs are small next to a real node's defaults.
evictionHard: {memory.available: "20Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 20
syncFrequency: 10s
nodeStatusUpdateFrequency: 5s
# Each node's own: a kubelet removes the log directories of pods it does
# not run, so nodes sharing one file system must not share this.
podLogsDir: %q
`, strings.TrimPrefix(n.cgroup, cgroupFS), n.sock, o.NodeIP, n.podLogs())
	cfgPath := filepath.Join(n.Dir, "kubelet.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	keys := make([]string, 0, len(o.Labels))
	for k := range o.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var labels []string
	for _, k := range keys {
		labels = append(labels, k+"="+o.Labels[k])
	}
	p, err := spawn(n.Dir, "kubelet", o.NetnsPath, nil, b.Kubelet,
		"--config="+cfgPath, "--kubeconfig="+api.Kubeconfig, "--root-dir="+root,
		"--hostname-override="+o.Name, "--node-ip="+o.NodeIP, "--node-labels="+strings.Join(labels, ","), "--v=1")
	if err != nil {
		return err
	}
	n.procs = append(n.procs, p)
	if err := n.join(p); err != nil {
		return fmt.Errorf("move the kubelet into the node's cgroup: %w", err)
	}
	return nil
}

func (n *Node) podLogs() string { return filepath.Join(n.Dir, "pod-logs") }

// PodLogs are the tails of the logs of the node's containers.
func (n *Node) PodLogs() string {
	files, _ := filepath.Glob(filepath.Join(n.podLogs(), "*", "*", "*.log"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		fmt.Fprintf(&b, "\n--- %s ---\n%s", strings.TrimPrefix(f, n.podLogs()+"/"), strings.Join(lines[max(0, len(lines)-30):], "\n"))
	}
	return b.String()
}

// Check reports an error when containerd or the kubelet has exited.
func (n *Node) Check() error {
	var errs []error
	for _, p := range n.procs {
		errs = append(errs, p.running())
	}
	return errors.Join(errs...)
}

// Logs are the tails of the node's logs, for a failing test.
func (n *Node) Logs() string {
	var b strings.Builder
	for _, p := range n.procs {
		fmt.Fprintf(&b, "\n--- %s/%s (tail) ---\n%s", n.Name, p.name, p.tail(40))
	}
	return b.String()
}

// Stop kills every process in the node's cgroup (kubelet, containerd,
// shims, containers), closes the relays and unmounts the node's tmpfs.
func (n *Node) Stop() {
	for i := len(n.procs) - 1; i >= 0; i-- {
		n.procs[i].stop(10 * time.Second)
	}
	if _, err := os.Stat(filepath.Join(n.cgroup, "cgroup.kill")); err == nil {
		_ = os.WriteFile(filepath.Join(n.cgroup, "cgroup.kill"), []byte("1"), 0o644)
	}
	for _, r := range n.relays {
		r.close()
	}
	_ = syscall.Unmount(n.Dir, syscall.MNT_DETACH)
}
