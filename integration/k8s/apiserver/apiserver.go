// Package apiserver starts a real kube-apiserver backed by a real etcd on
// loopback for the Kubernetes integration tests and the benchmark. Both
// run as child processes on a temporary directory that Stop removes.
//
// It owns only those processes and that directory. The kube-apiserver
// binary comes from tools/kubernetes/build.sh (env TLB_KUBE_APISERVER);
// etcd from Debian's etcd-server (env TLB_ETCD, default /usr/bin/etcd).
package apiserver

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Server is a running etcd + kube-apiserver pair.
type Server struct {
	// Config reaches the API server as a cluster admin (system:masters).
	Config *rest.Config
	// Kubeconfig is a file with the same credentials, for child processes.
	Kubeconfig string
	// Dir holds data, certificates and logs.
	Dir string
	// ServiceAccountKeyFile is the key that signs service account tokens
	// (for a kube-controller-manager beside the server).
	ServiceAccountKeyFile string
	// OnRetry, when set, hears of each request CreateAll sends again
	// because the server answered "retry" (Retryable), e.g. for a test's
	// log.
	OnRetry func(what string, err error)

	etcd, apiserver *proc
}

// proc is a child process and a channel closed when it has exited.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// Binaries returns the kube-apiserver and etcd paths from the environment,
// or an error saying how to get them.
func Binaries() (apiserver, etcd string, err error) {
	apiserver = os.Getenv("TLB_KUBE_APISERVER")
	if apiserver == "" {
		return "", "", errors.New("TLB_KUBE_APISERVER is not set; run tools/k8s-test.sh, which builds and caches kube-apiserver")
	}
	etcd = os.Getenv("TLB_ETCD")
	if etcd == "" {
		etcd = "/usr/bin/etcd"
	}
	for _, b := range []string{apiserver, etcd} {
		if _, err := os.Stat(b); err != nil {
			return "", "", fmt.Errorf("find test binary: %w (run tools/k8s-test.sh; etcd comes from the Debian package etcd-server)", err)
		}
	}
	return apiserver, etcd, nil
}

// Start runs etcd and kube-apiserver in a new temporary directory and
// waits until the API server is ready (at most timeout).
func Start(timeout time.Duration) (_ *Server, err error) {
	apiserverBin, etcdBin, err := Binaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tlb-k8s-")
	if err != nil {
		return nil, fmt.Errorf("make the API server directory: %w", err)
	}
	s := &Server{Dir: dir}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, s.logTails())
			s.Stop()
		}
	}()
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL, err := s.startEtcd(etcdBin, ports[0], ports[1])
	if err != nil {
		return nil, err
	}
	token, tokenFile, err := s.writeCredentials()
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(dir, "certs")
	host, err := s.startAPIServer(apiserverBin, etcdURL, ports[2], certDir, tokenFile)
	if err != nil {
		return nil, err
	}
	if err := waitReady(host, token, filepath.Join(certDir, "apiserver.crt"), timeout, s.apiserver); err != nil {
		return nil, err
	}
	s.Config = &rest.Config{
		Host:            host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(certDir, "apiserver.crt")},
		QPS:             200,
		Burst:           400,
	}
	if err := s.writeKubeconfig(); err != nil {
		return nil, err
	}
	return s, nil
}

// startEtcd runs a one-member etcd serving clients on clientPort and
// returns its client URL.
func (s *Server) startEtcd(bin string, clientPort, peerPort int) (string, error) {
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	var err error
	s.etcd, err = s.spawn("etcd", bin,
		"--name=tlb-test", "--data-dir="+filepath.Join(s.Dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=tlb-test="+peerURL, "--logger=zap", "--log-level=warn",
		"--quota-backend-bytes=2147483648")
	if err != nil {
		return "", err
	}
	return etcdURL, nil
}

// writeCredentials writes the service account signing key
// (ServiceAccountKeyFile) and a token file granting a new random token
// system:masters, and returns the token and that file.
func (s *Server) writeCredentials() (token, tokenFile string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", fmt.Errorf("generate the service account key: %w", err)
	}
	keyFile := filepath.Join(s.Dir, "sa.key")
	s.ServiceAccountKeyFile = keyFile
	der := x509.MarshalPKCS1PrivateKey(key)
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return "", "", fmt.Errorf("write the service account key: %w", err)
	}
	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return "", "", fmt.Errorf("generate the admin token: %w", err)
	}
	token = hex.EncodeToString(tok)
	tokenFile = filepath.Join(s.Dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(token+",tlb-test-admin,tlb-test-admin,system:masters\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("write the token file: %w", err)
	}
	return token, tokenFile, nil
}

// startAPIServer runs kube-apiserver on loopback port, storing in etcdURL
// and writing its serving certificate to certDir, and returns its URL.
func (s *Server) startAPIServer(bin, etcdURL string, port int, certDir, tokenFile string) (string, error) {
	p := strconv.Itoa(port)
	var err error
	s.apiserver, err = s.spawn("kube-apiserver", bin,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--secure-port="+p,
		// Explicit: the lab VM has no default route to derive it from.
		"--advertise-address=127.0.0.1",
		// No kubernetes.default endpoints: nothing in-cluster dials it.
		"--endpoint-reconciler-type=none",
		"--cert-dir="+certDir,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+s.ServiceAccountKeyFile, "--service-account-signing-key-file="+s.ServiceAccountKeyFile,
		"--authorization-mode=RBAC", "--token-auth-file="+tokenFile,
		// Dual-stack, so that Services may ask for IPv6 and both
		// families (spec.ipFamilies); the IPv4 range first keeps
		// SingleStack Services IPv4 as before.
		"--service-cluster-ip-range=10.96.0.0/16,fd00:10:96::/108",
		"--v=0")
	if err != nil {
		return "", err
	}
	return "https://127.0.0.1:" + p, nil
}

// writeKubeconfig writes Config as the file Kubeconfig, for child processes.
func (s *Server) writeKubeconfig() error {
	s.Kubeconfig = filepath.Join(s.Dir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: s.Config.Host, CertificateAuthority: s.Config.CAFile}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: s.Config.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	kc.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*kc, s.Kubeconfig); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// Stop ends both processes and removes the directory.
func (s *Server) Stop() {
	for _, p := range []*proc{s.apiserver, s.etcd} {
		if p == nil {
			continue
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	if os.Getenv("TLB_K8S_KEEP") == "" {
		_ = os.RemoveAll(s.Dir)
	}
}

func (s *Server) spawn(name, bin string, args ...string) (*proc, error) {
	logf, err := os.Create(filepath.Join(s.Dir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("create the %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Die with the test process even if it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		close(p.exited)
	}()
	return p, nil
}

// logTails returns the last lines of each log, for failure messages.
func (s *Server) logTails() string {
	var b strings.Builder
	for _, n := range []string{"etcd", "kube-apiserver"} {
		data, err := os.ReadFile(filepath.Join(s.Dir, n+".log"))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		lines = lines[max(0, len(lines)-15):]
		fmt.Fprintf(&b, "--- %s log (tail) ---\n%s\n", n, strings.Join(lines, "\n"))
	}
	return b.String()
}

func waitReady(host, token, caFile string, timeout time.Duration, p *proc) error {
	exited := p.exited
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("kube-apiserver exited before it was ready")
		default:
		}
		if _, err := os.Stat(caFile); err == nil {
			cfg := &rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: caFile}, Timeout: 5 * time.Second}
			if c, err := rest.HTTPClientFor(cfg); err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, host+"/readyz", nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := c.Do(req)
				if err == nil {
					_ = resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						cancel()
						return nil
					}
					last = resp.Status
				} else {
					last = err.Error()
				}
				cancel()
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver not ready after %s (last: %s)", timeout, last)
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free loopback port: %w", err)
		}
		lns = append(lns, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
