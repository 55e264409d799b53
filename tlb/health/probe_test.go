package health

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

var loopback = netip.MustParseAddr("127.0.0.1")

func portOf(t *testing.T, addr net.Addr) uint16 {
	t.Helper()
	return uint16(addr.(*net.TCPAddr).Port)
}

func TestTCPProber(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := portOf(t, l.Addr())
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx := context.Background()
	if err := (TCPProber{Port: port}).Probe(ctx, loopback); err != nil {
		t.Fatalf("probe of a listening port: %v", err)
	}
	l.Close()
	if err := (TCPProber{Port: port}).Probe(ctx, loopback); err == nil {
		t.Fatal("probe of a closed port succeeded")
	}
}

func TestHTTPProber(t *testing.T) {
	status := map[string]int{"/healthz": 200, "/sick": 503, "/moved": 302}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(2 * time.Second)
		}
		if r.URL.Path == "/moved" {
			w.Header().Set("Location", "/healthz")
		}
		code, ok := status[r.URL.Path]
		if !ok {
			code = 404
		}
		w.WriteHeader(code)
	}))
	defer srv.Close()
	port := portOf(t, srv.Listener.Addr())

	cases := map[string]struct {
		path    string
		wantErr string
	}{
		"healthy":                 {"/healthz", ""},
		"503":                     {"/sick", "status 503"},
		"redirect is not success": {"/moved", "status 302"},
		"missing":                 {"/nope", "status 404"},
		"timeout":                 {"/slow", "deadline"},
	}
	for name, tc := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := NewHTTPProber(port, tc.path, nil).Probe(ctx, loopback)
		cancel()
		if tc.wantErr == "" && err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: error = %v, want one containing %q", name, err, tc.wantErr)
		}
	}
}

// TestProbersUseTheGivenDial: probes leave through the DialFunc (how a
// director in one namespace probes from another in tests).
func TestProbersUseTheGivenDial(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	port := portOf(t, srv.Listener.Addr())
	var dialed []string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	ctx := context.Background()
	cfgTCP := Config{Kind: KindTCP, Port: port}.Defaulted()
	cfgHTTP := Config{Kind: KindHTTP, Port: port}.Defaulted()
	if err := NewProber(cfgTCP, dial).Probe(ctx, loopback); err != nil {
		t.Fatal(err)
	}
	if err := NewProber(cfgHTTP, dial).Probe(ctx, loopback); err != nil {
		t.Fatal(err)
	}
	want := netip.AddrPortFrom(loopback, port).String()
	if len(dialed) != 2 || dialed[0] != want || dialed[1] != want {
		t.Errorf("dialed %v, want %s twice", dialed, want)
	}
}
