package birdlab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// envLab carries the lab's namespace names to the re-executed child.
const envLab = "TLB_BIRDLAB"

// Lab is two network namespaces joined by one veth link: Router holds the
// router side (RouterAddr on RouterIf), Directors holds the speakers' side
// with DirectorAddrs all on DirectorIf, one per speaker.
type Lab struct {
	// Router is the router's namespace name.
	Router string
	// Directors is the speakers' namespace name.
	Directors string
	// RouterIf is the router's interface.
	RouterIf string
	// DirectorIf is the speakers' interface.
	DirectorIf string
	// RouterAddr is the router's address (no mask).
	RouterAddr string
	// DirectorAddrs are the speakers' addresses (no mask).
	DirectorAddrs []string
}

// Setup creates the lab under prefix (namespaces "<prefix>-r" and
// "<prefix>-d") with n director addresses 198.18.0.2 ... on a /24 with
// the router at 198.18.0.1. Call Teardown when done.
func Setup(ctx context.Context, prefix string, n int) (*Lab, error) {
	if n < 1 || n > 200 {
		return nil, fmt.Errorf("set up bird lab %s: %d directors is out of range", prefix, n)
	}
	l := &Lab{
		Router: prefix + "-r", Directors: prefix + "-d",
		RouterIf: "r0", DirectorIf: "d0",
		RouterAddr: "198.18.0.1",
	}
	for i := range n {
		l.DirectorAddrs = append(l.DirectorAddrs, fmt.Sprintf("198.18.0.%d", i+2))
	}
	steps := [][]string{
		{"netns", "add", l.Router},
		{"netns", "add", l.Directors},
		{"-n", l.Directors, "link", "add", l.DirectorIf, "type", "veth", "peer", "name", l.RouterIf, "netns", l.Router},
		{"-n", l.Router, "addr", "add", l.RouterAddr + "/24", "dev", l.RouterIf},
		{"-n", l.Router, "link", "set", l.RouterIf, "up"},
		{"-n", l.Router, "link", "set", "lo", "up"},
		{"-n", l.Directors, "link", "set", l.DirectorIf, "up"},
		{"-n", l.Directors, "link", "set", "lo", "up"},
	}
	for _, a := range l.DirectorAddrs {
		steps = append(steps, []string{"-n", l.Directors, "addr", "add", a + "/24", "dev", l.DirectorIf})
	}
	for _, s := range steps {
		if err := ip(ctx, s...); err != nil {
			l.Teardown()
			return nil, fmt.Errorf("set up bird lab %s: %w", prefix, err)
		}
	}
	// Addresses must leave "tentative" before bind() to them works.
	if err := l.waitAddrs(ctx); err != nil {
		l.Teardown()
		return nil, err
	}
	return l, nil
}

func (l *Lab) waitAddrs(ctx context.Context) error {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		out, err := exec.CommandContext(ctx, "ip", "-n", l.Directors, "addr", "show", "dev", l.DirectorIf).CombinedOutput()
		if err == nil && !bytes.Contains(out, []byte("tentative")) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("addresses on %s in %s stayed tentative", l.DirectorIf, l.Directors)
}

// Teardown deletes both namespaces (and with them the veth link).
func (l *Lab) Teardown() {
	for _, ns := range []string{l.Router, l.Directors} {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
}

// Enter re-runs the current binary, with the same arguments, inside the
// Directors namespace and returns its exit code; the lab travels in the
// environment. In the child, FromEnv returns the lab.
func (l *Lab) Enter() (int, error) {
	args := append([]string{"netns", "exec", l.Directors, os.Args[0]}, os.Args[1:]...)
	cmd := exec.Command("ip", args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), envLab+"="+l.encode())
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 1, fmt.Errorf("re-run %s in namespace %s: %w", os.Args[0], l.Directors, err)
	}
	return 0, nil
}

// FromEnv returns the lab this process was started in by Enter, or nil.
func FromEnv() *Lab {
	v := os.Getenv(envLab)
	if v == "" {
		return nil
	}
	f := strings.Split(v, ",")
	if len(f) < 6 {
		return nil
	}
	return &Lab{Router: f[0], Directors: f[1], RouterIf: f[2], DirectorIf: f[3], RouterAddr: f[4], DirectorAddrs: f[5:]}
}

func (l *Lab) encode() string {
	return strings.Join(append([]string{l.Router, l.Directors, l.RouterIf, l.DirectorIf, l.RouterAddr}, l.DirectorAddrs...), ",")
}

// KernelRoute returns `ip route show <prefix>` in the router namespace:
// what BIRD installed in the kernel.
func (l *Lab) KernelRoute(ctx context.Context, prefix string) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", "-n", l.Router, "route", "show", prefix).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("read kernel route %s in %s: %w: %s", prefix, l.Router, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func ip(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// AddIPv6 puts IPv6 addresses on the lab's link, routerAddr on the
// router's side and directorAddr on the speakers' side, in one /64, so
// that BIRD resolves a speaker's IPv6 next hop on it as it does the IPv4
// ones. It returns the function that removes them.
func (l *Lab) AddIPv6(ctx context.Context, routerAddr, directorAddr string) (func(), error) {
	remove := func() {
		_ = ip(context.Background(), "-n", l.Router, "addr", "del", routerAddr+"/64", "dev", l.RouterIf)
		_ = ip(context.Background(), "-n", l.Directors, "addr", "del", directorAddr+"/64", "dev", l.DirectorIf)
	}
	// nodad: usable at once, no duplicate address detection to wait for.
	for _, s := range [][]string{
		{"-n", l.Router, "addr", "add", routerAddr + "/64", "dev", l.RouterIf, "nodad"},
		{"-n", l.Directors, "addr", "add", directorAddr + "/64", "dev", l.DirectorIf, "nodad"},
	} {
		if err := ip(ctx, s...); err != nil {
			remove()
			return nil, err
		}
	}
	return remove, nil
}

// AddRouterAddr gives the router a second address on its link (a /32,
// e.g. a second router of another rack) and returns the function that
// removes it.
func (l *Lab) AddRouterAddr(ctx context.Context, addr string) (func(), error) {
	if err := ip(ctx, "-n", l.Router, "addr", "add", addr+"/32", "dev", l.RouterIf); err != nil {
		return nil, err
	}
	if err := ip(ctx, "-n", l.Directors, "route", "add", addr+"/32", "dev", l.DirectorIf); err != nil {
		_ = ip(ctx, "-n", l.Router, "addr", "del", addr+"/32", "dev", l.RouterIf)
		return nil, err
	}
	return func() {
		_ = ip(context.Background(), "-n", l.Directors, "route", "del", addr+"/32", "dev", l.DirectorIf)
		_ = ip(context.Background(), "-n", l.Router, "addr", "del", addr+"/32", "dev", l.RouterIf)
	}, nil
}
