//go:build conformance

package gatewayconformance

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// process is a child process of the run with its output in a kept log.
type process struct {
	name, log string
	cmd       *exec.Cmd
	exited    chan struct{}
}

// startProcess starts argv with its output in logDir/name.log and stops it
// when the test ends.
func startProcess(t *testing.T, logDir, name string, argv ...string) *process {
	t.Helper()
	logPath := filepath.Join(logDir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("create the log of %s: %v", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{name: name, log: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		close(p.exited)
	}()
	t.Cleanup(func() { p.stop(10 * time.Second) })
	return p
}

// exitedEarly reports, once, whether the process has already exited.
func (p *process) exitedEarly() (bool, string) {
	select {
	case <-p.exited:
		return true, fmt.Sprintf("%s exited (%v); its log %s ends:\n%s", p.name, p.cmd.ProcessState, p.log, p.tail(20))
	default:
		return false, ""
	}
}

func (p *process) stop(grace time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *process) tail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// moduleDir is the directory of a module of the build.
func moduleDir(t *testing.T, module string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Fatalf("find module %s: %v", module, err)
	}
	return string(bytes.TrimSpace(out))
}

// stageCRDs copies the CustomResourceDefinitions of the YAML files of dirs
// into one new directory, for apiserver.InstallCRDs: the Gateway API
// standard channel ships a ValidatingAdmissionPolicy beside its CRDs,
// which is not a CRD.
func stageCRDs(t *testing.T, dirs ...string) string {
	t.Helper()
	out := t.TempDir()
	n := 0
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			objs, err := apiserver.ReadManifests(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) == 0 || objs[0].GetKind() != "CustomResourceDefinition" {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			n++
			if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("%02d-%s", n, filepath.Base(f))), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no CRDs in %v", dirs)
	}
	return out
}

// keptDir is where the run keeps its report and logs: the directory of
// $TLB_CONFORMANCE_REPORT, else the lab cache.
func keptDir(t *testing.T) (dir, report string) {
	t.Helper()
	report = os.Getenv("TLB_CONFORMANCE_REPORT")
	if report == "" {
		cache := os.Getenv("TLB_LAB_CACHE")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				t.Fatal(err)
			}
			cache = filepath.Join(home, ".cache", "tlb-lab")
		}
		report = filepath.Join(cache, "gateway-api-conformance", "report.yaml")
	}
	dir = filepath.Join(filepath.Dir(report), "logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, report
}
