package director

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netns"
)

// TestNetnsProcSysStaysInItsNamespace needs root (to create a network
// namespace); it uses net/ipv4/ip_forward, which is per namespace and
// exists on every kernel, since the host kernel here has no IPVS.
func TestNetnsProcSysStaysInItsNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a network namespace")
	}
	name := fmt.Sprintf("tlbtest-procsys-%d", os.Getpid())
	func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		orig, err := netns.Get()
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = orig.Close() }()
		created, err := netns.NewNamed(name) // also switches this thread into it
		if err != nil {
			t.Fatalf("create network namespace: %v", err)
		}
		_ = created.Close()
		if err := netns.Set(orig); err != nil {
			t.Fatalf("return to the original namespace: %v", err)
		}
	}()
	t.Cleanup(func() { _ = netns.DeleteNamed(name) })

	host := ProcSys{}
	before, err := host.Get("net/ipv4/ip_forward")
	if err != nil {
		t.Fatal(err)
	}
	want := "1"
	if before == "1" {
		want = "0"
	}
	inNS := NetnsProcSys{NsPath: "/var/run/netns/" + name}
	if err := inNS.Set("net/ipv4/ip_forward", want); err != nil {
		t.Fatal(err)
	}
	if got, err := inNS.Get("net/ipv4/ip_forward"); err != nil || got != want {
		t.Errorf("in namespace: ip_forward = %q, %v; want %q", got, err, want)
	}
	if after, _ := host.Get("net/ipv4/ip_forward"); after != before {
		t.Errorf("host ip_forward changed from %q to %q", before, after)
	}
	if _, err := (NetnsProcSys{NsPath: "/var/run/netns/does-not-exist"}).Get("net/ipv4/ip_forward"); err == nil {
		t.Error("Get in a missing namespace succeeded")
	}
}
