//go:build lab

package e2e_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/integration/k8snode"
	"github.com/tlbproject/tlb/integration/topo"
)

// envoyProcess is the Envoy container of the gateway pod on node as the
// node's containerd runs it.
func envoyProcess(t *testing.T, kc kubernetes.Interface, node *k8snode.Node) int {
	t.Helper()
	pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=tlb-gateway"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != node.Name {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name != "envoy" {
				continue
			}
			pid, err := node.ContainerPID(context.Background(), cs.ContainerID)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no envoy container of a tlb-gateway pod on %s", node.Name)
	return 0
}

// procStatus reads the fields of /proc/PID/status.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return out
}

// checkEnvoyPrivileges: the gateway's Envoy runs as the manifest says
// (user and group 101, no privilege escalation) and holds exactly
// CAP_NET_BIND_SERVICE, which it can only have from its file capability
// (Kubernetes gives a non-root process no ambient capabilities): the
// executable containerd unpacked carries the layer's security.capability.
func checkEnvoyPrivileges(t *testing.T, pid int) {
	t.Helper()
	st := procStatus(t, pid)
	want := map[string]string{
		"Uid":        "101 101 101 101",
		"Gid":        "101 101 101 101",
		"CapEff":     fmt.Sprintf("%016x", capNetBindService),
		"CapPrm":     fmt.Sprintf("%016x", capNetBindService),
		"CapInh":     fmt.Sprintf("%016x", 0),
		"CapAmb":     fmt.Sprintf("%016x", 0),
		"NoNewPrivs": "1",
	}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("envoy (pid %d) %s: %q; want %q", pid, k, st[k], v)
		}
	}
	t.Logf("envoy pid %d: Uid %s, CapEff %s, CapPrm %s, CapBnd %s, CapAmb %s, NoNewPrivs %s", pid, st["Uid"], st["CapEff"], st["CapPrm"], st["CapBnd"], st["CapAmb"], st["NoNewPrivs"])
	buf := make([]byte, 64)
	n, err := syscall.Getxattr(fmt.Sprintf("/proc/%d/exe", pid), "security.capability", buf)
	if err != nil {
		t.Fatalf("security.capability of envoy's executable as containerd unpacked it: %v", err)
	}
	if got := hex.EncodeToString(buf[:n]); got != fileCapNetBindService {
		t.Errorf("security.capability of envoy's executable = %s; want %s (cap_net_bind_service=ep)", got, fileCapNetBindService)
	}
}

// listeningSockets are the TCP sockets in LISTEN state of the network
// namespace of pid that the process itself holds, by local address, with
// the user that opened each.
func listeningSockets(t *testing.T, pid int) map[string]int {
	t.Helper()
	held := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil {
			if inode, ok := strings.CutPrefix(l, "socket:["); ok {
				held[strings.TrimSuffix(inode, "]")] = true
			}
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "0A" || !held[f[9]] {
			continue
		}
		ipHex, portHex, _ := strings.Cut(f[1], ":")
		ip, err1 := strconv.ParseUint(ipHex, 16, 32)
		port, err2 := strconv.ParseUint(portHex, 16, 16)
		uid, err3 := strconv.Atoi(f[7])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("unreadable line of /proc/%d/net/tcp: %q", pid, line)
		}
		addr := make(net.IP, 4)
		binary.LittleEndian.PutUint32(addr, uint32(ip))
		out[net.JoinHostPort(addr.String(), strconv.Itoa(int(port)))] = uid
	}
	return out
}

// checkEnvoyListens: Envoy's own sockets listen on addrs, opened as user
// 101, in the node's network namespace (the pod's, with hostNetwork).
func checkEnvoyListens(t *testing.T, pid int, addrs []string) {
	t.Helper()
	socks := listeningSockets(t, pid)
	for _, addr := range addrs {
		uid, ok := socks[addr]
		if !ok {
			t.Errorf("envoy (pid %d) holds no socket listening on %s; its listening sockets: %v", pid, addr, socks)
		} else if uid != 101 {
			t.Errorf("envoy's socket on %s belongs to uid %d; want 101", addr, uid)
		}
	}
	t.Logf("envoy's listening sockets (address: uid): %v", socks)
}

// checkCapabilityMatters is the control: the image's own Envoy binary
// (copied from the running container, which drops extended attributes)
// run in the gateway node as the pod runs it (user and group 101,
// permitted and effective {NET_BIND_SERVICE} kept across setuid, no
// ambient capabilities, no_new_privs: what runc sets up, here with capsh)
// cannot bind a port below 1024, and binds it once the copy carries the
// security.capability of the image's file.
func checkCapabilityMatters(t *testing.T, gw *topo.Node, pid int) {
	t.Helper()
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	caps := make([]byte, 64)
	n, err := syscall.Getxattr(exe, "security.capability", caps)
	if err != nil {
		t.Fatal(err)
	}
	caps = caps[:n]
	// Not t.TempDir(): its parent is the test's own directory, mode
	// 0700, which user 101 cannot traverse, so capsh's execve of the
	// copies failed with EACCES before Envoy ever ran.
	dir, err := os.MkdirTemp("", "envoy-control-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // user 101 reads it
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	plain, withCap := filepath.Join(dir, "envoy-plain"), filepath.Join(dir, "envoy-cap")
	for _, p := range []string{plain, withCap} {
		if err := os.WriteFile(p, bin, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Setxattr(withCap, "security.capability", caps, 0); err != nil {
		t.Fatal(err)
	}
	const addr = "127.77.0.9:443"
	host, port, _ := net.SplitHostPort(addr)
	boot := filepath.Join(dir, "bootstrap.yaml")
	if err := os.WriteFile(boot, []byte(fmt.Sprintf(`static_resources:
  listeners:
    - name: control
      address: {socket_address: {address: %s, port_value: %s}}
      filter_chains:
        - filters:
            - name: envoy.filters.network.echo
              typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.network.echo.v3.Echo}
`, host, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, envoy string) *exec.Cmd {
		return gw.CmdContext(ctx, "capsh", "--keep=1", "--gid=101", "--groups=101", "--uid=101",
			"--caps=cap_net_bind_service+ep", "--no-new-privs", "--shell="+envoy,
			"--", "-c", boot, "--disable-hot-restart", "--log-level", "warn")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := run(ctx, plain).CombinedOutput()
	if want := "cannot bind '" + addr + "': Permission denied"; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("the image's Envoy without its file capability, as user 101: %v\n%s\nwant it to exit with %q", err, out, want)
	} else {
		t.Logf("control: without the file capability the image's Envoy exits: %q", want)
	}
	var log strings.Builder
	cmd := run(ctx, withCap)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	waitFor(t, 2*time.Minute, "the copy with the image's file capability listens on "+addr, func() bool {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the copy with the file capability exited: %v\n%s", err, log.String())
		default:
		}
		c, err := gw.Dial("tcp", addr)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	})
	t.Logf("control: with the image's file capability the same binary binds %s as user 101", addr)
}
