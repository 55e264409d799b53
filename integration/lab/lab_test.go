package lab

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestBootRunsCommandOnLabKernel boots the lab VM once and checks that the
// command ran on the lab kernel (not the host's), with IPVS and IPIP
// available, and that its exit status comes back.
func TestBootRunsCommandOnLabKernel(t *testing.T) {
	k, err := FindKernel(CacheDir())
	if err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Kernel: k, Output: &out},
		"sh", "-c", `uname -r; test -d /proc/sys/net/ipv4/vs && echo ipvs-ok; ip link show tunl0 >/dev/null && echo ipip-ok; id -u; exit 7`)
	if err != nil {
		t.Fatalf("lab run: %v\noutput:\n%s", err, out.String())
	}
	t.Logf("lab boot: accel=%s boot=%s total=%s", res.Accel, res.Boot, res.Total)
	if res.ExitCode != 7 {
		t.Errorf("exit code = %d, want 7 (the command's own status)", res.ExitCode)
	}
	lines := strings.Fields(out.String())
	want := []string{k.Version, "ipvs-ok", "ipip-ok", "0"}
	if strings.Join(lines, " ") != strings.Join(want, " ") {
		t.Errorf("guest output = %q, want %q", lines, want)
	}
}

func TestCommandScriptQuotesArguments(t *testing.T) {
	s := commandScript(Options{Env: []string{"A=b c"}, Dir: "/x y"}, []string{"echo", "it's"})
	for _, want := range []string{`export 'A=b c'`, `cd '/x y'`, `'echo' 'it'\''s'`, "modprobe ip_vs_mh"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
}
