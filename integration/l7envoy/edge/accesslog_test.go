package edge

import (
	"bufio"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
)

// accessLine is one line of the gateway's JSON access log (docs/l7.md,
// "Edge basics").
type accessLine map[string]any

// accessLines returns the JSON access log lines Envoy wrote to stdout
// (the gateway's envoy.log) for which match holds, waiting up to a
// minute for at least want of them (Envoy flushes its log every second).
func accessLines(t *testing.T, g *envoyproc.Gateway, want int, match func(accessLine) bool) []accessLine {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var out []accessLine
		sc := bufio.NewScanner(strings.NewReader(g.LogTail("envoy", 1<<30)))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l accessLine
			if !strings.HasPrefix(sc.Text(), "{") || json.Unmarshal(sc.Bytes(), &l) != nil || l["request_id"] == nil {
				continue
			}
			if match(l) {
				out = append(out, l)
			}
		}
		if len(out) >= want || time.Now().After(deadline) {
			return out
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// str is a field of the line as text (numbers without decimals).
func (l accessLine) str(k string) string {
	switch v := l[k].(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprint(v)
	}
}

var (
	uuidRE        = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$`)
)

// TestAccessLogAndTraceHeaders: every request through a gateway listener
// is one JSON line on Envoy's stdout with the fields docs/l7.md lists,
// matching what the backend saw (request id, route, upstream, VIP...);
// a service with accessLog off writes none. Without tracing Envoy passes
// traceparent/tracestate through untouched and replaces a client's
// x-request-id by its own; with a gateway's tracing block it continues
// the client's trace (same trace id, its own span id) or starts one, and
// logs the trace id.
func TestAccessLogAndTraceHeaders(t *testing.T) {
	const vip, node = "127.0.21.16", "127.0.21.116"
	b := startBackend(t, "site")
	g := startGateway(t, node, map[string]string{
		"gw.yaml": fmt.Sprintf(`kind: gateway/gateway/v1
name: public
group: edge
listeners: [{name: web, vip: %s, port: 21080, protocol: HTTP}]
`, vip),
		// A gateway whose spans go to a collector (none listens there:
		// export fails, propagation does not depend on it).
		"traced.yaml": fmt.Sprintf(`kind: gateway/gateway/v1
name: traced
group: edge
tracing: {otlpEndpoint: "127.0.21.4:4317", samplePercent: 100}
listeners: [{name: web, vip: %s, port: 21081, protocol: HTTP}]
`, vip),
		"site.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: site
group: edge
hosts: [site.example.com]
listeners: [public/web, traced/web]
upstreams: [{name: main, endpoints: ["%s"]}]
routes: [{name: main, prefix: /, target: main}]
`, b.addr()),
		"quiet.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: quiet
group: edge
hosts: [quiet.example.com]
listeners: [public/web]
accessLog: "off"
upstreams: [{name: main, endpoints: ["%s"]}]
routes: [{name: main, prefix: /, target: main}]
`, b.addr()),
	})
	plain, traced := plainClient(vip+":21080"), plainClient(vip+":21081")
	const clientTrace = "0af7651916cd43dd8448eb211c80319c"
	clientParent := "00-" + clientTrace + "-b7ad6b7169203331-01"

	t.Run("access log line", func(t *testing.T) {
		r := send(t, plain, request{Method: "POST", URL: "http://site.example.com/orders/1?x=y", Body: "hello",
			Header: map[string]string{"user-agent": "edge-test/1", "x-request-id": "client-chosen", "traceparent": clientParent, "tracestate": "vendor=1"}})
		r.wantStatus(t, 200)
		id, _ := r.sawHeader("x-request-id")
		if !uuidRE.MatchString(id) {
			t.Fatalf("x-request-id upstream %q: want Envoy's own UUID in place of the client's", id)
		}
		if got, _ := r.sawHeader("traceparent"); got != clientParent {
			t.Errorf("traceparent upstream %q, want the client's %q untouched (no tracing)", got, clientParent)
		}
		if got, _ := r.sawHeader("tracestate"); got != "vendor=1" {
			t.Errorf("tracestate upstream %q, want it passed through", got)
		}
		ls := accessLines(t, g, 1, func(l accessLine) bool { return l.str("request_id") == id })
		if len(ls) != 1 {
			t.Fatalf("%d access log lines with request_id %s, want 1:\n%s", len(ls), id, g.LogTail("envoy", 3000))
		}
		l := ls[0]
		for k, want := range map[string]string{
			"status": "200", "method": "POST", "path": "/orders/1?x=y", "host": "site.example.com", "protocol": "HTTP/1.1",
			"route": "site/main", "upstream": "site/main", "upstream_host": b.addr(), "vip": vip + ":21080",
			"client": "127.0.0.1", "user_agent": "edge-test/1", "bytes_received": "5", "response_flags": "-",
			"traceparent": clientParent, "trace_id": "",
		} {
			if got := l.str(k); got != want {
				t.Errorf("access log %s = %q, want %q", k, got, want)
			}
		}
		if n, _ := l["bytes_sent"].(float64); int(n) != len(r.Body) {
			t.Errorf("bytes_sent %v, want %d (the body sent)", l["bytes_sent"], len(r.Body))
		}
		if _, ok := l["duration_ms"].(float64); !ok {
			t.Errorf("duration_ms %v, want a number", l["duration_ms"])
		}
		if ts, err := time.Parse(time.RFC3339Nano, l.str("time")); err != nil || time.Since(ts) > 10*time.Minute {
			t.Errorf("time %q: want the request's start, RFC 3339 (%v)", l.str("time"), err)
		}
	})

	t.Run("a reply of the gateway itself is logged with its flags", func(t *testing.T) {
		r := send(t, plain, request{URL: "http://nowhere.example.com/x"})
		r.wantStatus(t, 404)
		id := r.Header.Get("x-request-id")
		ls := accessLines(t, g, 1, func(l accessLine) bool { return l.str("host") == "nowhere.example.com" })
		if len(ls) != 1 || ls[0].str("status") != "404" || ls[0].str("response_flags") != "NR" || ls[0].str("route") != "" {
			t.Errorf("lines %v, want one 404 with flag NR and no route (x-request-id %q)", ls, id)
		}
	})

	t.Run("x-request-id generated when missing", func(t *testing.T) {
		r := send(t, plain, request{URL: "http://site.example.com/gen"})
		r.wantStatus(t, 200)
		id, _ := r.sawHeader("x-request-id")
		if !uuidRE.MatchString(id) {
			t.Fatalf("x-request-id upstream %q, want a UUID", id)
		}
		if got, _ := r.sawHeader("traceparent"); got != "" {
			t.Errorf("traceparent %q upstream without tracing or a client's", got)
		}
		if ls := accessLines(t, g, 1, func(l accessLine) bool { return l.str("request_id") == id }); len(ls) != 1 {
			t.Errorf("%d lines with the generated id, want 1", len(ls))
		}
	})

	t.Run("accessLog off", func(t *testing.T) {
		r := send(t, plain, request{URL: "http://quiet.example.com/secret-card-number"})
		r.wantStatus(t, 200)
		// A logged request sent after it: once its line is there, the
		// quiet one would be too.
		after := send(t, plain, request{URL: "http://site.example.com/after-quiet"})
		after.wantStatus(t, 200)
		if ls := accessLines(t, g, 1, func(l accessLine) bool { return l.str("path") == "/after-quiet" }); len(ls) != 1 {
			t.Fatalf("the request after the quiet one was not logged")
		}
		if ls := accessLines(t, g, 0, func(l accessLine) bool { return l.str("host") == "quiet.example.com" }); len(ls) != 0 {
			t.Errorf("the quiet service was logged: %v", ls)
		}
	})

	t.Run("tracing continues the client's trace", func(t *testing.T) {
		r := send(t, traced, request{URL: "http://site.example.com/traced", Header: map[string]string{"traceparent": clientParent}})
		r.wantStatus(t, 200)
		got, _ := r.sawHeader("traceparent")
		m := traceparentRE.FindStringSubmatch(got)
		if m == nil || m[1] != clientTrace || m[2] == "b7ad6b7169203331" {
			t.Fatalf("traceparent upstream %q, want trace %s with Envoy's own span id", got, clientTrace)
		}
		id, _ := r.sawHeader("x-request-id")
		ls := accessLines(t, g, 1, func(l accessLine) bool { return l.str("request_id") == id })
		if len(ls) != 1 || ls[0].str("trace_id") != clientTrace || ls[0].str("vip") != vip+":21081" {
			t.Errorf("lines %v, want one with trace_id %s on the traced listener", ls, clientTrace)
		}
	})

	t.Run("tracing starts a trace", func(t *testing.T) {
		r := send(t, traced, request{URL: "http://site.example.com/new-trace"})
		r.wantStatus(t, 200)
		got, _ := r.sawHeader("traceparent")
		m := traceparentRE.FindStringSubmatch(got)
		if m == nil {
			t.Fatalf("traceparent upstream %q, want a new W3C trace", got)
		}
		id, _ := r.sawHeader("x-request-id")
		if ls := accessLines(t, g, 1, func(l accessLine) bool { return l.str("request_id") == id }); len(ls) != 1 || ls[0].str("trace_id") != m[1] {
			t.Errorf("lines %v, want one with trace_id %s", ls, m[1])
		}
	})
}
