package gatewayconformance

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// echoImage is the image name (any registry tag) whose containers
// PodProcesses runs: the suite's echo server.
const echoImage = "gateway-api/echo-basic"

// PodProcesses runs the containers of the suite's echo server image as
// processes of the echo-basic program, one network namespace per Pod: a
// veth pair joins it to the harness's namespace, the Pod's end (eth0)
// holds the Pod IP, the harness's end a /32 route to it. The process gets
// the container's environment with the downward API fields filled in, and
// the Secrets its volumes mount written under a directory of the Pod. It
// keeps each container's output, time-stamped per line, for the simulated
// kubelet's log endpoint.
type PodProcesses struct {
	client  kubernetes.Interface
	echoBin string
	// dnsBin, when set, runs the coredns containers: it serves DNS on
	// port 53 when DNSStandInEnv says so (the conformance test binary).
	dnsBin string
	dir    string
	log    *slog.Logger

	mu    sync.Mutex
	pods  map[string]*podProc // namespace/name -> its processes
	links int                 // the number of host links made, for their names
}

// podProc is one running Pod.
type podProc struct {
	uid   types.UID
	link  string
	dir   string
	procs []*exec.Cmd
	done  []chan struct{}
	logs  map[string]*lineLog // container -> output
}

// NewPodProcesses runs echo containers with the echo-basic binary echoBin,
// keeping their files under dir.
func NewPodProcesses(client kubernetes.Interface, echoBin, dir string, log *slog.Logger) *PodProcesses {
	return &PodProcesses{client: client, echoBin: echoBin, dir: dir, log: log, pods: map[string]*podProc{}}
}

// Run starts pod's echo containers with the Pod IP ip and waits until each
// accepts connections on its HTTP port. A Pod already running (same UID)
// is left alone; a Pod without echo containers gets no process.
func (r *PodProcesses) Run(ctx context.Context, pod *corev1.Pod, ip netip.Addr) error {
	key := pod.Namespace + "/" + pod.Name
	r.mu.Lock()
	if p := r.pods[key]; p != nil && p.uid == pod.UID {
		r.mu.Unlock()
		return nil
	}
	r.links++
	n := r.links
	r.mu.Unlock()
	r.Stop(key) // a Pod of the same name before this one

	var echo []corev1.Container
	for _, c := range pod.Spec.Containers {
		if r.simulated(c.Image) {
			echo = append(echo, c)
		} else {
			r.log.Info("container not run: only the echo server's image runs here", "pod", key, "container", c.Name, "image", c.Image)
		}
	}
	if len(echo) == 0 {
		return nil
	}
	p := &podProc{uid: pod.UID, link: fmt.Sprintf("gcp%d", n), dir: filepath.Join(r.dir, fmt.Sprintf("pod%d", n)), logs: map[string]*lineLog{}}
	if err := r.start(ctx, pod, ip, echo, p); err != nil {
		r.kill(p)
		return fmt.Errorf("pod %s: %w", key, err)
	}
	r.mu.Lock()
	r.pods[key] = p
	r.mu.Unlock()
	return nil
}

// WithDNS runs the coredns containers with bin (see dnsBin).
func (r *PodProcesses) WithDNS(bin string) *PodProcesses {
	r.dnsBin = bin
	return r
}

// simulated reports whether containers of image run here: the echo
// server's, and coredns's when a DNS stand-in is set.
func (r *PodProcesses) simulated(image string) bool {
	return strings.Contains(image, echoImage) || (r.dnsBin != "" && strings.Contains(image, dnsImage))
}

// start starts the processes of p, the first in a new network namespace,
// the others in the first one's, and connects the namespace.
func (r *PodProcesses) start(ctx context.Context, pod *corev1.Pod, ip netip.Addr, echo []corev1.Container, p *podProc) error {
	mounts, err := r.writeVolumes(ctx, pod, p.dir)
	if err != nil {
		return err
	}
	for i, c := range echo {
		env, err := r.env(ctx, pod, c, ip, mounts)
		if err != nil {
			return err
		}
		bin := r.echoBin
		if strings.Contains(c.Image, dnsImage) {
			bin = r.dnsBin
			env = append(env, DNSStandInEnv+"=:53")
		}
		cmd := exec.Command(bin)
		if i > 0 {
			cmd = exec.Command("nsenter", fmt.Sprintf("--net=/proc/%d/ns/net", p.procs[0].Process.Pid), "--", bin)
		}
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		out := &lineLog{}
		p.logs[c.Name] = out
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if i == 0 {
			cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNET
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start container %s: %w", c.Name, err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		p.procs, p.done = append(p.procs, cmd), append(p.done, done)
	}
	pid := p.procs[0].Process.Pid
	if err := ipBatch(nil, fmt.Sprintf("link add %s type veth peer name eth0 netns %d\nlink set %s up\n", p.link, pid, p.link)); err != nil {
		return err
	}
	if err := ipBatch([]string{"nsenter", fmt.Sprintf("--net=/proc/%d/ns/net", pid), "--"},
		fmt.Sprintf("link set lo up\naddr add %s/32 dev eth0\nlink set eth0 up\nroute add default dev eth0\n", ip)); err != nil {
		return err
	}
	if err := ipBatch(nil, fmt.Sprintf("route add %s/32 dev %s\n", ip, p.link)); err != nil {
		return err
	}
	for i, c := range echo {
		if err := waitFor(ctx, 20*time.Second, func(context.Context) (bool, error) {
			select {
			case <-p.done[i]:
				return false, fmt.Errorf("exited: %s", p.logs[c.Name].tail())
			default:
			}
			return listening(p.procs[i].Process.Pid)
		}); err != nil {
			return fmt.Errorf("container %s never listened: %w", c.Name, err)
		}
	}
	return nil
}

// listening reports whether the network namespace of process pid has a
// listening TCP socket or a bound UDP one: the echo server's modes listen
// on ports of their own (HTTP, HTTPS, gRPC, TCP, UDP), all at start.
func listening(pid int) (bool, error) {
	for _, f := range []string{"tcp", "tcp6", "udp", "udp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			return false, err
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")[1:]
		for _, l := range lines {
			fields := strings.Fields(l)
			if len(fields) > 3 && (strings.HasPrefix(f, "udp") || fields[3] == "0A") {
				return true, nil
			}
		}
	}
	return false, nil
}

// ipBatch runs `ip -batch -` (behind prefix, e.g. nsenter) on cmds.
func ipBatch(prefix []string, cmds string) error {
	argv := append(append([]string{}, prefix...), "ip", "-batch", "-")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(cmds)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s <<%q: %w: %s", strings.Join(argv, " "), cmds, err, out)
	}
	return nil
}

// writeVolumes writes the Secrets pod mounts under dir and returns, per
// mount path, where its files are.
func (r *PodProcesses) writeVolumes(ctx context.Context, pod *corev1.Pod, dir string) (map[string]string, error) {
	secrets := map[string]*corev1.SecretVolumeSource{}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil {
			secrets[v.Name] = v.Secret
		}
	}
	mounts := map[string]string{}
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			src, ok := secrets[m.Name]
			if !ok {
				continue
			}
			s, err := r.client.CoreV1().Secrets(pod.Namespace).Get(ctx, src.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("volume %s: %w", m.Name, err)
			}
			to := filepath.Join(dir, "volumes", m.Name)
			if err := os.MkdirAll(to, 0o700); err != nil {
				return nil, err
			}
			files := map[string]string{} // key -> file name
			for k := range s.Data {
				files[k] = k
			}
			if len(src.Items) > 0 {
				files = map[string]string{}
				for _, it := range src.Items {
					files[it.Key] = it.Path
				}
			}
			for k, name := range files {
				data, ok := s.Data[k]
				if !ok {
					return nil, fmt.Errorf("volume %s: Secret %s has no key %s", m.Name, src.SecretName, k)
				}
				if err := os.WriteFile(filepath.Join(to, name), data, 0o600); err != nil {
					return nil, err
				}
			}
			mounts[m.MountPath] = to
		}
	}
	return mounts, nil
}

// env is container c's environment: plain values, the downward API
// fields, Secret and ConfigMap keys; a value naming a file under a mounted
// Secret is pointed at where the harness wrote it.
func (r *PodProcesses) env(ctx context.Context, pod *corev1.Pod, c corev1.Container, ip netip.Addr, mounts map[string]string) ([]string, error) {
	var out []string
	for _, e := range c.Env {
		v := e.Value
		switch src := e.ValueFrom; {
		case src == nil:
			for mp, to := range mounts {
				if rest, ok := strings.CutPrefix(v, strings.TrimSuffix(mp, "/")+"/"); ok {
					v = filepath.Join(to, rest)
				}
			}
		case src.FieldRef != nil:
			f, ok := map[string]string{
				"metadata.name": pod.Name, "metadata.namespace": pod.Namespace, "metadata.uid": string(pod.UID),
				"spec.nodeName": pod.Spec.NodeName, "spec.serviceAccountName": pod.Spec.ServiceAccountName,
				"status.podIP": ip.String(), "status.hostIP": "127.0.0.1",
			}[src.FieldRef.FieldPath]
			if !ok {
				return nil, fmt.Errorf("container %s env %s: field %s not simulated", c.Name, e.Name, src.FieldRef.FieldPath)
			}
			v = f
		case src.SecretKeyRef != nil:
			s, err := r.client.CoreV1().Secrets(pod.Namespace).Get(ctx, src.SecretKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("container %s env %s: %w", c.Name, e.Name, err)
			}
			v = string(s.Data[src.SecretKeyRef.Key])
		case src.ConfigMapKeyRef != nil:
			cm, err := r.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, src.ConfigMapKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("container %s env %s: %w", c.Name, e.Name, err)
			}
			v = cm.Data[src.ConfigMapKeyRef.Key]
		default:
			return nil, fmt.Errorf("container %s env %s: source not simulated", c.Name, e.Name)
		}
		out = append(out, e.Name+"="+v)
	}
	return out, nil
}

// Stop kills the processes of the Pod key (namespace/name), which takes
// its network namespace and veth pair with them.
func (r *PodProcesses) Stop(key string) {
	r.mu.Lock()
	p := r.pods[key]
	delete(r.pods, key)
	r.mu.Unlock()
	if p != nil {
		r.kill(p)
	}
}

// StopAll kills every Pod's processes.
func (r *PodProcesses) StopAll() {
	r.mu.Lock()
	keys := make([]string, 0, len(r.pods))
	for k := range r.pods {
		keys = append(keys, k)
	}
	r.mu.Unlock()
	for _, k := range keys {
		r.Stop(k)
	}
}

func (r *PodProcesses) kill(p *podProc) {
	for i, cmd := range p.procs {
		_ = cmd.Process.Kill()
		<-p.done[i]
	}
	// Gone with the namespace as a rule; a Pod that failed half-way may
	// have left it.
	_ = exec.Command("ip", "link", "del", p.link).Run()
	_ = os.RemoveAll(p.dir)
}

// Logs returns the lines container of Pod namespace/name wrote since
// since, as the kubelet's log endpoint would.
func (r *PodProcesses) Logs(namespace, name, container string, since time.Time) ([]byte, bool) {
	r.mu.Lock()
	p := r.pods[namespace+"/"+name]
	r.mu.Unlock()
	if p == nil {
		return nil, false
	}
	l := p.logs[container]
	if l == nil {
		return nil, false
	}
	return l.since(since), true
}

// lineLog keeps a process's output as lines with the time each ended.
type lineLog struct {
	mu      sync.Mutex
	partial []byte
	lines   []logLine
}

type logLine struct {
	at   time.Time
	text []byte
}

// Write splits p into lines, stamping each complete one now.
func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := strings.IndexByte(string(l.partial), '\n')
		if i < 0 {
			return len(p), nil
		}
		l.lines = append(l.lines, logLine{at: time.Now(), text: append([]byte(nil), l.partial[:i+1]...)})
		l.partial = l.partial[i+1:]
	}
}

func (l *lineLog) since(t time.Time) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	for _, ln := range l.lines {
		if !ln.at.Before(t) {
			out = append(out, ln.text...)
		}
	}
	return out
}

func (l *lineLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, ln := range l.lines[max(0, len(l.lines)-10):] {
		b.Write(ln.text)
	}
	return b.String()
}

// Running returns the Pods (namespace/name) whose processes run.
func (r *PodProcesses) Running() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.pods))
	for k := range r.pods {
		out = append(out, k)
	}
	return out
}
