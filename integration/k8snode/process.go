package k8snode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is a child process with its output in a log file.
type process struct {
	name   string
	log    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// spawn starts argv with its output in dir/name.log. A non-empty netns
// path runs it in that network namespace (nsenter --net): only the network
// namespace changes, so the kubelet's mounts stay visible to containerd.
func spawn(dir, name, netnsPath string, env []string, argv ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create the log of %s: %w", name, err)
	}
	if netnsPath != "" {
		argv = append([]string{"nsenter", "--net=" + netnsPath, "--"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, log: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		close(p.exited)
	}()
	return p, nil
}

// running reports an error when the process has exited.
func (p *process) running() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited (%v); its log:\n%s", p.name, p.cmd.ProcessState, p.tail(40))
	default:
		return nil
	}
}

// stop sends SIGTERM, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// tail is the last n lines of the log.
func (p *process) tail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
