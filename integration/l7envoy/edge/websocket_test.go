package edge

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestWebSocket: a route with websocket: true upgrades through Envoy (on
// the HTTP and the HTTPS listener) and carries messages both ways; the
// service's other route refuses the upgrade (403).
func TestWebSocket(t *testing.T) {
	const vip, node = "127.0.21.15", "127.0.21.115"
	ca := newCA(t)
	crt, key := ca.issue(t, "chat.example.com")
	b := startBackend(t, "chat")
	startGateway(t, node, map[string]string{
		"certs/chat.crt": crt, "certs/chat.key": key,
		"gw.yaml": fmt.Sprintf(`kind: gateway/gateway/v1
name: gw
group: edge
listeners:
  - {name: web, vip: %[1]s, port: 21080, protocol: HTTP}
  - {name: tls, vip: %[1]s, port: 21443, protocol: HTTPS, certificates: [{name: chat, sni: [chat.example.com], certFile: certs/chat.crt, keyFile: certs/chat.key}]}
`, vip),
		"chat.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: chat
group: edge
hosts: [chat.example.com]
listeners: [gw/web, gw/tls]
upstreams: [{name: main, endpoints: ["%s"]}]
routes:
  - {name: live, prefix: /live, target: main, websocket: true, timeout: "off"}
  - {name: main, prefix: /, target: main}
`, b.addr()),
	})
	for _, tc := range []struct {
		name, url, addr string
		ok              bool
	}{
		{"upgrade on the websocket route", "ws://chat.example.com/live/ws", vip + ":21080", true},
		{"upgrade over TLS", "wss://chat.example.com/live/ws", vip + ":21443", true},
		{"no upgrade on another route", "ws://chat.example.com/other/ws", vip + ":21080", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := websocket.Dialer{
				NetDialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, network, tc.addr)
				},
				TLSClientConfig:  &tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS12},
				HandshakeTimeout: 30 * time.Second,
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			conn, resp, err := d.DialContext(ctx, tc.url, http.Header{"origin": {"https://chat.example.com"}})
			if resp != nil {
				_ = resp.Body.Close()
			}
			if !tc.ok {
				if err == nil {
					_ = conn.Close()
					t.Fatal("the upgrade succeeded on a route without websocket")
				}
				if resp == nil || resp.StatusCode != http.StatusForbidden {
					t.Fatalf("refusal %v (response %v), want Envoy's 403 for an upgrade the route does not allow", err, resp)
				}
				return
			}
			if err != nil {
				t.Fatalf("upgrade: %v (response %v)", err, resp)
			}
			defer func() { _ = conn.Close() }()
			if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("x-backend") != "chat" {
				t.Errorf("upgrade answer %d from %q", resp.StatusCode, resp.Header.Get("x-backend"))
			}
			_ = conn.NetConn().SetDeadline(time.Now().Add(30 * time.Second))
			for i, msg := range []string{"hello", "second message", string(make([]byte, 70000))} {
				kind := websocket.TextMessage
				if i == 2 {
					kind = websocket.BinaryMessage
				}
				if err := conn.WriteMessage(kind, []byte(msg)); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
				gotKind, got, err := conn.ReadMessage()
				if err != nil {
					t.Fatalf("read %d: %v", i, err)
				}
				if gotKind != kind || string(got) != "chat echoes "+msg {
					t.Fatalf("message %d: kind %d, %d bytes %q, want kind %d and the echo", i, gotKind, len(got), truncate(string(got), 40), kind)
				}
			}
			if err := conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"), time.Now().Add(10*time.Second)); err != nil {
				t.Fatalf("close: %v", err)
			}
		})
	}
}
