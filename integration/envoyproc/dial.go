package envoyproc

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// DialFunc opens a connection, as net.Dialer.DialContext does; a lab
// node's DialContext opens it from inside the node.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// ClientVia is ClientTo with the connections opened by dial: a client in
// a lab node reaching a VIP's listener, SNI and certificate checks as for
// the name in the URL.
func ClientVia(dial DialFunc, addr string, tlsConfig *tls.Config, keepAlive bool) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dial(ctx, network, addr)
			},
			TLSClientConfig:   tlsConfig,
			DisableKeepAlives: !keepAlive,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
