package transport

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
)

// The l7 of group alpha that serves off the pod (proxyless gRPC clients),
// over mutual TLS.
const (
	mtlsADS = "127.0.25.3:25018"
	mtlsObs = "127.0.25.3:25480"
)

// TestOtherGroupAndStolenIdentity (issue 22): group alpha's l7 serving
// ADS over mutual TLS, as the real binary, to clients of every kind:
//
//   - a gateway of group bravo, with its own valid SPIFFE identity, gets
//     nothing, whether it asks as bravo (another group) or as alpha;
//   - a stolen certificate of another kind (alpha's proxyless gRPC
//     identity) asking for a gateway's resources gets nothing, and as a
//     gRPC client gets no Secret;
//   - no certificate, or plain TCP, gets no stream at all;
//   - alpha's gateway identity gets alpha's key for ga.acert, never
//     bravo's (bravo's rejected gateway has the same name), and bravo's
//     keys are nowhere in this l7's memory.
func TestOtherGroupAndStolenIdentity(t *testing.T) {
	needRoot(t)
	g := writeGroups(t, 0)
	p := newPKI(t)
	cert, key, ca := p.writeServer(t, filepath.Dir(g.dir), net.ParseIP("127.0.25.3"))
	l7 := startL7(t, []string{"--group=" + alpha, "--config=" + g.dir, "--cert-dir=" + g.certDir, "--grpc-clients",
		"--xds-addr=" + mtlsADS, "--xds-tls-cert=" + cert, "--xds-tls-key=" + key, "--xds-client-ca=" + ca,
		"--metrics-addr=" + mtlsObs}, readyz(mtlsObs))
	td := xds.DefaultTrustDomain
	dial := func(creds credentials.TransportCredentials) *grpc.ClientConn {
		cc, err := grpc.NewClient(mtlsADS, grpc.WithTransportCredentials(creds))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cc.Close() })
		return cc
	}
	as := func(uris ...string) *grpc.ClientConn { return dial(credentials.NewTLS(p.client(t, uris...))) }

	for name, tc := range map[string]struct {
		cc          *grpc.ClientConn
		kind, group string
		typ         string
		want        string // gRPC code; "" answered
	}{
		"bravo's gateway as bravo":             {as(xds.SPIFFEID(td, translate.Gateway, "bravo")), "gateway", "bravo", resource.SecretType, "PermissionDenied"},
		"bravo's gateway as alpha":             {as(xds.SPIFFEID(td, translate.Gateway, "bravo")), "gateway", alpha, resource.SecretType, "PermissionDenied"},
		"alpha's gRPC identity as its gateway": {as(xds.SPIFFEID(td, translate.GRPC, alpha)), "gateway", alpha, resource.SecretType, "PermissionDenied"},
		"alpha's gateway identity as bravo":    {as(xds.SPIFFEID(td, translate.Gateway, alpha)), "gateway", "bravo", resource.SecretType, "PermissionDenied"},
		"another trust domain":                 {as(xds.SPIFFEID("evil.example", translate.Gateway, alpha)), "gateway", alpha, resource.SecretType, "PermissionDenied"},
		"no client certificate":                {as(), "gateway", alpha, resource.SecretType, "Unavailable"},
		"plain TCP":                            {dial(insecure.NewCredentials()), "gateway", alpha, resource.SecretType, "Unavailable"},
		"alpha's gRPC identity, its listeners": {as(xds.SPIFFEID(td, translate.GRPC, alpha)), "grpc", alpha, resource.ListenerType, ""},
		"alpha's gRPC identity, Secrets":       {as(xds.SPIFFEID(td, translate.GRPC, alpha)), "grpc", alpha, resource.SecretType, "DeadlineExceeded"},
	} {
		t.Run(name, func(t *testing.T) {
			a := askADS(tc.cc, tc.kind, tc.group, tc.typ, 10*time.Second)
			if a.Code != tc.want || (tc.want != "" && len(a.Names) > 0) {
				t.Fatalf("got %v (%s %s), want %q", a.Names, a.Code, a.Message, tc.want)
			}
			if tc.want == "" && len(a.Names) == 0 {
				t.Fatal("the control answer is empty")
			}
		})
	}
	t.Run("alpha's gateway gets alpha's key alone", func(t *testing.T) {
		a := askADS(as(xds.SPIFFEID(td, translate.Gateway, alpha)), "gateway", alpha, resource.SecretType, 10*time.Second)
		if a.Code != "" || len(a.Keys) != 1 || !bytes.Equal(a.Keys["ga.acert"], g.keys["alpha"]) {
			t.Fatalf("got %v (%s %s), want ga.acert with alpha's key", a.Names, a.Code, a.Message)
		}
	})
	for _, k := range []string{"bravo", "bravo2"} {
		if n := keyCount(t, l7.cmd.Process.Pid, g.keys[k]); n != 0 {
			t.Errorf("%s's key is %d times in alpha's l7", k, n)
		}
	}
}

// TestRateLimitL7HoldsNoKey (issue 22): the l7 beside the rate limit
// service (l7 serve --keyless, as deploy/envoy/ratelimit.yaml runs it)
// builds the group from the same DSL and certificate directory, yet no
// key of any group is in its memory, and it lists no routes.
func TestRateLimitL7HoldsNoKey(t *testing.T) {
	needRoot(t)
	g := writeGroups(t, 0)
	run, err := os.MkdirTemp("", "rl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(run) })
	obs := "127.0.25.4:25480"
	l7 := startL7(t, []string{"--group=" + alpha, "--config=" + g.dir, "--cert-dir=" + g.certDir, "--keyless",
		"--ratelimit-address=127.0.25.4:25081", "--ratelimit-xds-listen=unix://" + filepath.Join(run, "rl.sock"),
		"--metrics-addr=" + obs}, readyz(obs))
	for _, k := range []string{"alpha", "bravo", "bravo2"} {
		if n := keyCount(t, l7.cmd.Process.Pid, g.keys[k]); n != 0 {
			t.Errorf("%s's key is %d times in the rate limit service's l7", k, n)
		}
	}
	socks := listeningOf(t, l7.cmd.Process.Pid)
	if len(socks.Unix) != 1 || len(socks.TCP) != 1 {
		t.Errorf("want the configuration's socket and the obs listener alone, got %+v", socks)
	}
}

// TestNoPlainTCPControlInterface (issue 22): l7 serve refuses to serve
// ADS, the authorization service or the rate limit service's
// configuration on a TCP address without mutual TLS, loopback included
// (gateway pods share the node's network, so loopback is every local
// user's), and listens on nothing. On main each was accepted on loopback.
func TestNoPlainTCPControlInterface(t *testing.T) {
	bin, err := envoyproc.L7Binary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for flag, want := range map[string]string{
		"--xds-addr=127.0.25.5:25019":             "needs mutual TLS",
		"--authz-listen=127.0.25.5:25020":         "only a unix socket",
		"--ratelimit-xds-listen=127.0.25.5:25021": "only a unix socket",
	} {
		args := []string{"serve", "--group=" + alpha, "--config=" + dir, "--metrics-addr=", flag}
		if strings.HasPrefix(flag, "--authz") {
			args = append(args, "--xds-addr=unix://"+filepath.Join(dir, "xds.sock"), "--authz-redis=127.0.25.5:6379")
		} else if strings.HasPrefix(flag, "--ratelimit") {
			args = append(args, "--xds-addr=unix://"+filepath.Join(dir, "xds.sock"))
		}
		cmd := exec.Command(bin, args...)
		done := make(chan struct{})
		var out []byte
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("%s: l7 serve did not refuse it (still running)", flag)
			continue
		}
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("%s: exit %v, output %q; want a refusal saying %q", flag, err, out, want)
		}
		_, addr, _ := strings.Cut(flag, "=")
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			t.Errorf("%s: something listens there", flag)
		}
	}
}
