package envoybench

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// backendBody is what the backend answers: about the size of the
// traefik/whoami reply seed 001 measured against.
var backendBody = []byte(strings.Repeat("tlb bench backend reply. ", 8) + "\n")

// backend is a minimal HTTP server on loopback that answers every request
// 200 with backendBody and counts the requests.
type backend struct {
	srv      *http.Server
	requests atomic.Int64
}

func startBackend(addrs ...string) (*backend, error) {
	b := &backend{}
	b.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b.requests.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(backendBody)
	})}
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			_ = b.srv.Close()
			return nil, err
		}
		go func() { _ = b.srv.Serve(l) }()
	}
	return b, nil
}

func (b *backend) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = b.srv.Shutdown(ctx)
}
