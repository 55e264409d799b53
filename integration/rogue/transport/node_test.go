package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// needRoot fails the test unless it runs as root: the probe runs as
// another user and the memory of other processes is read.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this suite plays other users and reads other processes' memory: run it as root (the lab and CI do)")
	}
}

// TestGatewayNode (issue 22): group alpha's gateway (l7 and Envoy as the
// manifest runs them) on a node, with a DSL directory it shares with
// group bravo.
//
//   - A local user of the node (uid nobody) tries every socket and port
//     l7 and Envoy listen on: each unix socket refuses it (also when the
//     pod's directory is opened to everyone: the sockets' own modes), and
//     over TCP it gets no ADS, no authorization check, no admin API, no
//     route list, and nothing with a key, a backend address or a host
//     name. On main l7 could be told to serve ADS and the authorization
//     service on loopback TCP, where this user fetched alpha's keys.
//   - Bravo's keys are nowhere in alpha's processes (on main bravo's key
//     was found 13 times in alpha's l7), and the real Envoy serves
//     alpha's certificate on alpha's listener.
func TestGatewayNode(t *testing.T) {
	needRoot(t)
	g := writeGroups(t, 101)
	gw := startAlphaGateway(t, g)
	l7, envoy := gw.L7Cmd.Process.Pid, gw.EnvoyCmd.Process.Pid
	socks := listeningOf(t, l7, envoy)
	for _, want := range []string{gw.XDSSocket, gw.AuthzSocket, gw.AdminSocket} {
		if !slices.Contains(socks.Unix, want) {
			t.Fatalf("the gateway does not listen on %s: %+v", want, socks)
		}
	}
	for _, want := range []string{gw.StatsAddr, gw.Metrics} {
		if !slices.Contains(socks.TCP, want) {
			t.Fatalf("the gateway does not listen on %s: %+v", want, socks)
		}
	}
	t.Logf("the gateway listens on %+v", socks)

	t.Run("a local user gets nothing", func(t *testing.T) {
		for _, opened := range []bool{false, true} {
			if opened {
				// As if the pod's volume were open to everyone: the sockets'
				// own modes must still refuse.
				for _, d := range []string{filepath.Dir(filepath.Dir(gw.XDSSocket)), filepath.Dir(gw.XDSSocket)} {
					if err := os.Chmod(d, 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, r := range probeAs(t, nobody, socks) {
				checkNothing(t, r, g)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if ok, why := gw.Ready(ctx); !ok {
			t.Errorf("the probe changed the gateway: Envoy not ready (%s)", why)
		}
	})

	t.Run("only alpha's key, and only in alpha's processes", func(t *testing.T) {
		for name, pid := range map[string]int{"l7": l7, "envoy": envoy} {
			for _, k := range []string{"bravo", "bravo2"} {
				if n := keyCount(t, pid, g.keys[k]); n != 0 {
					t.Errorf("%s's key is %d times in alpha's %s", k, n, name)
				}
			}
		}
		if n := keyCount(t, l7, g.keys["alpha"]); n == 0 {
			t.Error("alpha's own key is not in its l7: the memory scan finds nothing")
		}
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", alphaVIP, &tls.Config{ServerName: alphaHost, InsecureSkipVerify: true}) // #nosec G402 -- the leaf is compared below
		if err != nil {
			t.Fatalf("TLS to alpha's listener: %v", err)
		}
		defer func() { _ = c.Close() }()
		leaf := c.ConnectionState().PeerCertificates[0]
		if block, _ := pem.Decode(g.chains["alpha"]); block == nil || !bytes.Equal(leaf.Raw, block.Bytes) {
			t.Errorf("Envoy serves %q on alpha's listener, want alpha's own certificate", leaf.Subject.CommonName)
		}
		for _, addr := range []string{bravoVIP, bravoGBVIP} {
			if c, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
				_ = c.Close()
				t.Errorf("alpha's Envoy listens on bravo's %s", addr)
			}
		}
	})
}

// checkNothing fails unless r shows the local user got nothing of value.
func checkNothing(t *testing.T, r probeResult, g groups) {
	t.Helper()
	if strings.HasPrefix(r.Target, "unix:") {
		if !strings.Contains(r.DialErr, "permission denied") {
			t.Errorf("%s: a local user connected (%q)", r.Target, r.DialErr)
		}
		return
	}
	if r.DialErr != "" {
		return
	}
	for q, a := range r.ADS {
		if a.Code == "" || len(a.Names) > 0 {
			t.Errorf("%s: ADS %s answered: %v", r.Target, q, a.Names)
		}
	}
	if !strings.HasPrefix(r.Authz, "error:") {
		t.Errorf("%s: the authorization service answered a local user: %s", r.Target, r.Authz)
	}
	secrets := []string{backendIP, string(keyTraces(t, g.keys["alpha"])[0])}
	for q, a := range r.HTTP {
		readOnly := q == "GET /stats/prometheus" || q == "GET /metrics" || q == "GET /ready" || q == "GET /readyz"
		if a.Status >= 200 && a.Status < 400 && !readOnly {
			t.Errorf("%s: %s answered %d to a local user", r.Target, q, a.Status)
		}
		for _, s := range secrets {
			if strings.Contains(a.Body, s) {
				t.Errorf("%s: %s shows %q to a local user", r.Target, q, s)
			}
		}
		if q == "GET /metrics" && strings.Contains(a.Body, alphaHost) {
			t.Errorf("%s: %s shows the host %s to a local user", r.Target, q, alphaHost)
		}
	}
}
