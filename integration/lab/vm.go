package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// exitMarker is the line the guest prints with the command's exit status.
const exitMarker = "TLB-LAB-EXIT: "

// LabModules are loaded inside the guest before the command runs.
var LabModules = []string{"ip_vs", "ip_vs_mh", "ip_vs_wrr", "ip_vs_rr", "ip_vs_lc",
	"ipip", "dummy", "veth", "nf_tables", "nft_chain_nat", "nft_nat", "tcp_diag", "inet_diag", "sch_netem",
	// kube-proxy's IPVS mode (TestKubeProxyModes): its ipsets and the
	// iptables match on them.
	"ip_vs_sh", "nf_conntrack", "ip_set", "ip_set_hash_ip", "ip_set_hash_ipport", "ip_set_hash_ipportip",
	"ip_set_hash_ipportnet", "ip_set_hash_net", "ip_set_bitmap_port", "xt_set"}

// Options describe one lab boot.
type Options struct {
	Kernel    Kernel
	CacheDir  string
	MemoryMiB int           // default 2048
	CPUs      int           // default 2
	Timeout   time.Duration // default 15 minutes
	Env       []string      // KEY=VALUE set for the command
	Dir       string        // working directory inside the guest (a host path)
	Output    io.Writer     // receives the command's output as it runs
	Accel     string        // "kvm", "tcg" or "" (probe)
	// ArtifactDir, when set, receives the files tests print as artifact
	// lines (ArtifactLines), as DIR/TEST/NAME; those lines are left out of
	// Output, a one-line note per file takes their place.
	ArtifactDir string
}

// Result is what a boot reports.
type Result struct {
	ExitCode int
	Boot     time.Duration // from qemu start to the command starting
	Total    time.Duration
	Accel    string
}

// Run boots the lab kernel and runs argv as root inside it.
func Run(ctx context.Context, opts Options, argv ...string) (Result, error) {
	if len(argv) == 0 {
		return Result{}, errors.New("lab: no command")
	}
	if opts.MemoryMiB == 0 {
		opts.MemoryMiB = 2048
	}
	if opts.CPUs == 0 {
		opts.CPUs = 2
	}
	if opts.Timeout == 0 {
		opts.Timeout = 15 * time.Minute
	}
	if opts.Output == nil {
		opts.Output = io.Discard
	}
	if opts.CacheDir == "" {
		opts.CacheDir = CacheDir()
	}
	if opts.Kernel.Version == "" {
		k, err := FindKernel(opts.CacheDir)
		if err != nil {
			return Result{}, err
		}
		opts.Kernel = k
	}
	initrd, err := buildInitramfs(opts.Kernel, opts.CacheDir)
	if err != nil {
		return Result{}, err
	}
	if opts.Accel == "" {
		opts.Accel = probeAccel(ctx, opts, initrd)
	}
	runDir, err := os.MkdirTemp(opts.CacheDir, "run-")
	if err != nil {
		return Result{}, fmt.Errorf("lab: make run dir: %w", err)
	}
	defer func() { _ = os.RemoveAll(runDir) }()
	script := filepath.Join(runDir, "cmd.sh")
	if err := os.WriteFile(script, []byte(commandScript(opts, argv)), 0o644); err != nil {
		return Result{}, fmt.Errorf("lab: write command: %w", err)
	}
	return boot(ctx, opts, initrd, script)
}

// commandScript is the shell script the guest runs after chroot.
func commandScript(opts Options, argv []string) string {
	var b strings.Builder
	b.WriteString("export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TLB_LAB=1\n")
	for _, m := range LabModules {
		fmt.Fprintf(&b, "modprobe %s 2>/dev/null\n", m)
	}
	for _, e := range opts.Env {
		fmt.Fprintf(&b, "export %s\n", shellQuote(e))
	}
	if opts.Dir != "" {
		fmt.Fprintf(&b, "cd %s || exit 125\n", shellQuote(opts.Dir))
	}
	b.WriteString("echo TLB-LAB-START\n")
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	b.WriteString(strings.Join(quoted, " ") + " </dev/null 2>&1\n")
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func qemuArgs(opts Options, initrd, script, accel string) []string {
	args := []string{
		"-kernel", opts.Kernel.Image(),
		"-initrd", initrd,
		"-append", fmt.Sprintf("console=ttyS0 quiet loglevel=1 panic=-1 tsc=reliable tlb.run=%s tlb.kver=%s tlb.moddir=%s",
			script, opts.Kernel.Version, opts.Kernel.ModulesDir()),
		"-m", strconv.Itoa(opts.MemoryMiB),
		"-smp", strconv.Itoa(opts.CPUs),
		"-nodefaults", "-no-user-config", "-nographic", "-no-reboot",
		"-serial", "stdio", "-monitor", "none",
		"-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
	}
	if accel == "kvm" {
		args = append(args, "-accel", "kvm", "-cpu", "host")
	} else {
		args = append(args, "-accel", "tcg,thread=multi", "-cpu", "max")
	}
	return args
}

func boot(ctx context.Context, opts Options, initrd, script string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	start := time.Now()
	res := Result{ExitCode: -1, Accel: opts.Accel}
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", qemuArgs(opts, initrd, script, opts.Accel)...)
	cmd.Stdin = nil
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return res, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("lab: start qemu: %w", err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	started := false
	var tail []string
	arts := &Artifacts{Dir: opts.ArtifactDir}
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.HasSuffix(line, "TLB-LAB-START"):
			started = true
			res.Boot = time.Since(start)
		case res.ExitCode != -1:
			// after the marker only the kernel's power-down messages follow
		case strings.Contains(line, exitMarker):
			if n, err := strconv.Atoi(strings.TrimSpace(line[strings.Index(line, exitMarker)+len(exitMarker):])); err == nil {
				res.ExitCode = n
			}
		case started && opts.ArtifactDir != "":
			arts.Relay(opts.Output, line)
		case started:
			_, _ = fmt.Fprintln(opts.Output, line)
		default:
			tail = append(tail, line)
			if len(tail) > 40 {
				tail = tail[1:]
			}
		}
	}
	werr := cmd.Wait()
	res.Total = time.Since(start)
	for _, a := range arts.Incomplete() {
		_, _ = fmt.Fprintf(opts.Output, "lab: artifact %s: lines missing, not saved\n", a)
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("lab: VM timed out after %s (accel %s)", opts.Timeout, opts.Accel)
	}
	if res.ExitCode == -1 {
		return res, fmt.Errorf("lab: VM ended without an exit status (qemu: %w); console:\n%s", werr, strings.Join(tail, "\n"))
	}
	if res.ExitCode == 125 && !started {
		return res, fmt.Errorf("lab: guest could not start the command; console:\n%s", strings.Join(tail, "\n"))
	}
	return res, nil
}

// probeAccel returns "kvm" when a short KVM boot works and "tcg" otherwise.
// On the build machines a KVM guest was seen to hang at boot, so the probe
// has a short deadline; its verdict is cached for the machine's uptime.
func probeAccel(ctx context.Context, opts Options, initrd string) string {
	if os.Getenv("TLB_LAB_ACCEL") != "" {
		return os.Getenv("TLB_LAB_ACCEL")
	}
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return "tcg"
	}
	_ = f.Close()
	bootID, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	cache := filepath.Join(opts.CacheDir, "accel-"+strings.TrimSpace(string(bootID)))
	if b, err := os.ReadFile(cache); err == nil {
		return strings.TrimSpace(string(b))
	}
	verdict := "tcg"
	dir, err := os.MkdirTemp(opts.CacheDir, "probe-")
	if err == nil {
		defer func() { _ = os.RemoveAll(dir) }()
		script := filepath.Join(dir, "cmd.sh")
		if os.WriteFile(script, []byte("echo TLB-LAB-START\ntrue\n"), 0o644) == nil {
			p := opts
			p.Accel, p.Timeout, p.Output = "kvm", 20*time.Second, io.Discard
			if r, err := boot(ctx, p, initrd, script); err == nil && r.ExitCode == 0 {
				verdict = "kvm"
			}
		}
	}
	_ = os.WriteFile(cache, []byte(verdict), 0o644)
	return verdict
}
