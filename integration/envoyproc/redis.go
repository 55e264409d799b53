package envoyproc

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// RedisManifest is where deploy/ declares the L7 tier's Redis.
const RedisManifest = "deploy/envoy/redis.yaml"

// Redis is deploy/envoy/redis.yaml's Redis, started by running its
// container's script as written (the ACL users and their rules, persistence
// off), with a fresh password for each user, on the caller's address: the
// users, keys and commands the tests rely on are the manifest's.
type Redis struct {
	// Addr is its host:port.
	Addr string
	// Passwords holds each ACL user's password, by user name.
	Passwords map[string]string
	cmd       *exec.Cmd
	done      chan struct{}
}

// aclUser matches a user line the script writes: printf 'user NAME on
// ">%s" ...' "$VARIABLE".
var aclUser = regexp.MustCompile(`printf 'user (\S+) on ">%s"[^']*' "\$(\w+)"`)

// StartRedisT starts the manifest's Redis on host (an IP of the caller's
// range) at a free port, in a temporary directory, until the test ends.
func StartRedisT(t testing.TB, host string) *Redis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed: run tools/deps.sh (the Debian package redis-server)")
	}
	script, users, err := redisScript()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "redis")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	port, err := freeRedisPort(host)
	if err != nil {
		t.Fatal(err)
	}
	// The pod's paths and address, mapped to the test's.
	for old, repl := range map[string]string{"/data": dir, "--port 6379": "--port " + strconv.Itoa(port), "--bind 0.0.0.0": "--bind " + host} {
		if !strings.Contains(script, old) {
			t.Fatalf("%s: the redis container's script no longer has %q", RedisManifest, old)
		}
		script = strings.ReplaceAll(script, old, repl)
	}
	r := &Redis{Addr: net.JoinHostPort(host, strconv.Itoa(port)), Passwords: map[string]string{}, done: make(chan struct{})}
	env := os.Environ()
	for user, variable := range users {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		r.Passwords[user] = hex.EncodeToString(b)
		env = append(env, variable+"="+r.Passwords[user])
	}
	r.cmd = exec.Command("sh", "-c", script)
	r.cmd.Env = env
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.cmd.Stderr = r.cmd.Stdout
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("starting the manifest's redis: %v", err)
	}
	ready := make(chan struct{})
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		said := false
		for sc.Scan() {
			if log.Len() < 8192 {
				log.WriteString(sc.Text() + "\n")
			}
			if !said && strings.Contains(sc.Text(), "Ready to accept connections") {
				said = true
				close(ready)
			}
		}
		_ = r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(r.stop)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case <-ready:
	case <-r.done:
		t.Fatalf("the manifest's redis exited:\n%s", log.String())
	case <-ctx.Done():
		t.Fatalf("the manifest's redis is not ready after a minute:\n%s", log.String())
	}
	return r
}

func (r *Redis) stop() {
	_ = r.cmd.Process.Signal(syscall.SIGTERM) // redis-server is the shell's exec
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

// redisScript reads the redis container's shell script and the ACL users
// it declares (user -> the variable holding its password).
func redisScript() (string, map[string]string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", nil, err
	}
	b, err := os.ReadFile(filepath.Join(root, RedisManifest))
	if err != nil {
		return "", nil, err
	}
	doc, _, _ := strings.Cut(string(b), "\n---\n")
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict([]byte(doc), &d); err != nil {
		return "", nil, fmt.Errorf("envoyproc: %s: %w", RedisManifest, err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "redis" {
			continue
		}
		cmd := append(c.Command, c.Args...)
		if len(cmd) != 3 || cmd[0] != "sh" || cmd[1] != "-c" {
			return "", nil, fmt.Errorf("envoyproc: %s: the redis container is not sh -c SCRIPT", RedisManifest)
		}
		users := map[string]string{}
		for _, m := range aclUser.FindAllStringSubmatch(cmd[2], -1) {
			users[m[1]] = m[2]
		}
		if len(users) == 0 {
			return "", nil, fmt.Errorf("envoyproc: %s declares no ACL user", RedisManifest)
		}
		return cmd[2], users, nil
	}
	return "", nil, errors.New("envoyproc: " + RedisManifest + " has no container redis")
}

func freeRedisPort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("finding a free port on %s: %w", host, err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
