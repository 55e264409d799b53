package envoyproc

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// StartT starts a gateway for a test and waits until Envoy is ready
// (it took its first listeners and clusters from l7): the test fails
// with both logs' ends otherwise. Dir defaults to a short temporary
// directory. The gateway stops in the test's cleanup; a failed test's
// log shows the ends of both logs.
func StartT(t testing.TB, o Options) *Gateway {
	t.Helper()
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "gw")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(d) })
		o.Dir = d
	}
	g, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.Stop()
		if t.Failed() {
			t.Logf("--- envoy log (end):\n%s\n--- l7 log (end):\n%s", g.LogTail("envoy", 6000), g.LogTail("l7", 6000))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := g.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return g
}

// ClientTo returns an HTTP client that connects to addr (a listener's
// VIP:port) whatever host the request's URL names, so a test can ask for
// https://hello.example.com/ and have SNI, the Host header and certificate
// verification (against tlsConfig's RootCAs) work as for a real client.
// Each request uses a new connection unless keepAlive.
func ClientTo(addr string, tlsConfig *tls.Config, keepAlive bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return ClientVia(d.DialContext, addr, tlsConfig, keepAlive)
}
