package authz

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

// TestUndeclaredEndpointsAreNeverCalled: whatever chain a client of the
// authorization socket sends, l7 calls, dials and opens only what the
// operator declared; anything else is answered 500 naming the field,
// before any I/O (issue 22 item 4: any client of the socket could make
// l7 POST requests with their Authorization and Cookie to any URL).
func TestUndeclaredEndpointsAreNeverCalled(t *testing.T) {
	e := newEnv(t)
	var posted atomic.Int32
	victim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posted.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer victim.Close()
	gl := listen(t)
	defer gl.Close()
	for name, tc := range map[string]struct {
		in   chain.Interceptor
		want string
	}{
		"REST URL": {chain.Interceptor{Type: chain.TypeExternal, ID: "x", Transport: chain.TransportREST, URL: victim.URL + "/steal"},
			"interceptors[0].url: not an interceptor endpoint the operator declared"},
		"gRPC address": {chain.Interceptor{Type: chain.TypeExternal, ID: "x", Transport: chain.TransportGRPC, Address: gl.Addr().String()},
			"interceptors[0].address: \"" + gl.Addr().String() + "\" is not an interceptor endpoint the operator declared"},
		"htpasswd path": {chain.Interceptor{Type: chain.TypeBasicAuth, UsersFile: "/etc/shadow", Realm: "x"},
			"interceptors[0].usersFile: \"/etc/shadow\" is not an htpasswd file the operator declared"},
	} {
		t.Run(name, func(t *testing.T) {
			d := mustDeny(t, e.check(t, encode(t, tc.in), req{headers: map[string]string{"authorization": "Bearer secret", "cookie": "session=s"}}))
			if d.status != 500 || !strings.Contains(d.body, tc.want) {
				t.Errorf("%d %q, want 500 saying %q", d.status, d.body, tc.want)
			}
		})
	}
	if n := posted.Load(); n != 0 {
		t.Errorf("the undeclared URL received %d POSTs", n)
	}
	// Declared, the same URL is called; declared no longer, it is not.
	in := chain.Interceptor{Type: chain.TypeExternal, ID: "x", Transport: chain.TransportREST, URL: victim.URL + "/ok"}
	e.declare(Declared{REST: map[string]bool{in.URL: true}})
	e.check(t, encode(t, in), req{})
	if n := posted.Load(); n != 1 {
		t.Fatalf("the declared URL received %d POSTs, want 1", n)
	}
	e.declared.REST = nil
	e.declare(Declared{})
	if d := mustDeny(t, e.check(t, encode(t, in), req{})); d.status != 500 {
		t.Errorf("after the declaration was withdrawn: %d, want 500", d.status)
	}
	if n := posted.Load(); n != 1 {
		t.Errorf("a withdrawn URL was called again (%d POSTs)", n)
	}
}

// TestConnectionsToWithdrawnEndpointsClose: a declaration that no longer
// names a gRPC address closes its connection, so the connections and
// their goroutines follow what is declared (issue 22 item 6: 300
// tenant-named addresses left 1,200 goroutines behind).
func TestConnectionsToWithdrawnEndpointsClose(t *testing.T) {
	e := newEnv(t)
	const n = 60
	baseline := runtime.NumGoroutine()
	var addrs []string
	d := Declared{GRPC: map[string]bool{}}
	for i := range n {
		// Closed ports of this helper's range: nothing answers, the
		// client keeps trying to connect.
		addrs = append(addrs, fmt.Sprintf("127.0.26.250:%d", 26900+i))
		d.GRPC[addrs[i]] = true
	}
	e.declare(d)
	for _, a := range addrs {
		in := chain.Interceptor{Type: chain.TypeExternal, ID: "x", Transport: chain.TransportGRPC, Address: a, Timeout: chain.Duration(20 * time.Millisecond)}
		if got := mustDeny(t, e.check(t, encode(t, in), req{})); got.status != 503 {
			t.Fatalf("%s: %d, want 503", a, got.status)
		}
	}
	if got := e.svc.conns.Len(); got != n {
		t.Fatalf("%d connections open, want %d", got, n)
	}
	grown := runtime.NumGoroutine()
	if grown < baseline+n {
		t.Fatalf("goroutines %d -> %d: the connections did not start", baseline, grown)
	}
	e.declared.GRPC = map[string]bool{e.grpcAddr: true}
	e.declare(Declared{})
	if got := e.svc.conns.Len(); got != 0 {
		t.Errorf("%d connections left after their addresses were withdrawn", got)
	}
	deadline := time.Now().Add(time.Minute)
	for runtime.NumGoroutine() > baseline+10 {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines %d before, %d with %d connections, %d a minute after closing them", baseline, grown, n, runtime.NumGoroutine())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("goroutines: %d before, %d with %d connections, %d after", baseline, grown, n, runtime.NumGoroutine())
}
