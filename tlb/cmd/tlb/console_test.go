package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/internal/console"
)

func TestConsoleFlags(t *testing.T) {
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"endpoint without a name": {[]string{"console", "--director", "http://10.0.0.1:9100"}, "want NAME=URL"},
		"endpoint not a URL":      {[]string{"console", "--netd", "gw=10.0.0.1:9101"}, "is not an http(s) URL"},
		"extra argument":          {[]string{"console", "now"}, `unexpected argument "now"`},
		"bad log level":           {[]string{"console", "--log-level", "loud"}, "--log-level"},
		"address cannot be bound": {[]string{"console", "--listen", "256.0.0.1:1"}, "listen for the console"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := dispatch(tc.args, &stdout, &stderr); code == 0 {
				t.Errorf("exit code 0")
			}
			if !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("stderr = %q; want it to contain %q", stderr.String(), tc.wantErr)
			}
		})
	}
}

// TestServeConsoleServesUntilCancelled: the page answers over TCP and the
// server stops when ctx ends.
func TestServeConsoleServesUntilCancelled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serveConsole(ctx, ln, &console.Collector{Components: console.HTTPComponents{}, Timeout: time.Second},
			slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	// The listener is bound already: the first request is queued until
	// the server accepts it.
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "File mode") {
		t.Errorf("GET /: %d %q", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serveConsole: %v", err)
	}
}
