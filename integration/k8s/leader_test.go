//go:build k8s

package k8s

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
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

	"github.com/tlbproject/tlb/ipam/controller"
)

// replica is one ipam controller process.
type replica struct {
	id      string
	cmd     *exec.Cmd
	metrics string // host:port
	log     string // file of its stderr
}

func startReplica(t *testing.T, id string) *replica {
	t.Helper()
	return startIPAM(t, id, server.Kubeconfig, "--lease-name=t3-ipam", "--default-environment=t3")
}

// startIPAM runs the ipam binary as replica id through kubeconfig, with
// leader election on a short lease in tlb-system, until the test ends.
func startIPAM(t *testing.T, id, kubeconfig string, args ...string) *replica {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	logf, err := os.Create(filepath.Join(t.TempDir(), id+".log"))
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{"--kubeconfig=" + kubeconfig, "--metrics-addr=" + addr,
		"--identity=" + id, "--leader-election-namespace=tlb-system",
		"--lease-duration=6s", "--renew-deadline=4s", "--retry-period=1s"}, args...)
	cmd := exec.Command(ipamBin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{id: id, cmd: cmd, metrics: addr, log: logf.Name()}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			data, _ := os.ReadFile(logf.Name())
			t.Logf("--- replica %s log ---\n%s", id, data)
		}
	})
	return r
}

// metric reads one unlabelled sample from the replica's /metrics.
func (r *replica) metric(name string) (float64, error) {
	resp, err := http.Get("http://" + r.metrics + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == name {
			return strconv.ParseFloat(f[1], 64)
		}
	}
	return 0, fmt.Errorf("no metric %s", name)
}

func leaseHolder(kc kubernetes.Interface) string {
	l, err := kc.CoordinationV1().Leases("tlb-system").Get(context.Background(), "t3-ipam", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// TestLeaderElection: proof 3. Of two replicas only the Lease holder
// allocates; killing it (SIGKILL, no clean release) hands over to the
// other, which rebuilds from the API server and keeps existing VIPs.
func TestLeaderElection(t *testing.T) {
	ctx := context.Background()
	kc, dc := clients(t)
	ns := "t3"
	ensureNamespace(t, kc, ns)
	ensureNamespace(t, kc, "tlb-system")
	createPool(t, dc, "t3-c", "t3", 0, "t3-pool", "198.18.32.0/24")

	a := startReplica(t, "replica-a")
	eventually(t, 60*time.Second, "replica-a holds the Lease", func() (bool, string) {
		h := leaseHolder(kc)
		return h == "replica-a", "holder " + h
	})
	b := startReplica(t, "replica-b")
	eventually(t, 30*time.Second, "replica-b serves metrics as a standby", func() (bool, string) {
		v, err := b.metric("tlb_ipam_leader")
		return err == nil && v == 0, fmt.Sprintf("leader=%v err=%v", v, err)
	})

	svcs := kc.CoreV1().Services(ns)
	create := func(names ...string) {
		for _, n := range names {
			if _, err := svcs.Create(ctx, lbService(ns, n, nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	allocatedBy := func(name, host string) {
		t.Helper()
		eventually(t, 60*time.Second, name+" allocated by "+host, func() (bool, string) {
			s, err := svcs.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if _, ok := vipOf(s); !ok {
				return false, "no VIP"
			}
			for _, e := range eventsFor(t, kc, ns, name) {
				if e.Reason == controller.ReasonAllocated {
					return e.Source.Host == host, "allocated by " + e.Source.Host
				}
			}
			return false, "no VIPAllocated event"
		})
	}
	first := []string{"a1", "a2", "a3"}
	create(first...)
	vips := map[string]netip.Addr{}
	for _, n := range first {
		allocatedBy(n, "replica-a")
		s, _ := svcs.Get(ctx, n, metav1.GetOptions{})
		vips[n], _ = vipOf(s)
	}
	if v, err := b.metric("tlb_ipam_allocations_total"); err != nil || v != 0 {
		t.Fatalf("standby replica-b allocated: tlb_ipam_allocations_total=%v err=%v", v, err)
	}
	if v, err := a.metric("tlb_ipam_allocations_total"); err != nil || v != float64(len(first)) {
		t.Fatalf("leader replica-a: tlb_ipam_allocations_total=%v err=%v, want %d", v, err, len(first))
	}

	// Kill the leader without letting it release the Lease.
	_ = a.cmd.Process.Kill()
	_, _ = a.cmd.Process.Wait()
	killed := time.Now()
	eventually(t, 60*time.Second, "replica-b takes the Lease", func() (bool, string) {
		h := leaseHolder(kc)
		return h == "replica-b", "holder " + h
	})
	t.Logf("handover took %s after SIGKILL (lease duration 6s)", time.Since(killed).Round(100*time.Millisecond))
	second := []string{"b1", "b2"}
	create(second...)
	for _, n := range second {
		allocatedBy(n, "replica-b")
	}
	for n, want := range vips {
		s, _ := svcs.Get(ctx, n, metav1.GetOptions{})
		if got, _ := vipOf(s); got != want {
			t.Errorf("handover changed %s: %s -> %s", n, want, got)
		}
	}
	if v, err := b.metric("tlb_ipam_allocations_total"); err != nil || v != float64(len(second)) {
		t.Fatalf("new leader replica-b: tlb_ipam_allocations_total=%v err=%v, want %d (only the new Services)", v, err, len(second))
	}
}
