package browser_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/browser"
)

// start starts a browser for the test with a viewport of w x h.
func start(t *testing.T, w, h int) *browser.Browser {
	t.Helper()
	bin, err := browser.Find()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := browser.Start(ctx, browser.Options{Binary: bin, Dir: t.TempDir(), Width: w, Height: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestLoadAsksTheServerEveryTimeAndRunsThePage loads a page whose server
// answers a new number each time and whose script adds to the DOM: each
// Load sees the server's latest answer (no cache between loads) and the
// DOM after the page's own script ran, as --dump-dom would print it.
func TestLoadAsksTheServerEveryTimeAndRunsThePage(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><html><body><p class="n">load %d</p><script>
document.body.append(Object.assign(document.createElement("p"), {id: "js", textContent: "ran " + (6*7)}))
</script></body></html>`, n.Add(1))
	}))
	defer srv.Close()
	b := start(t, 800, 600)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := 1; i <= 3; i++ {
		dom, err := b.Load(ctx, srv.URL+"/")
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`<p class="n">load %d</p>`, i); !strings.Contains(dom, want) {
			t.Errorf("load %d: DOM lacks %q:\n%s", i, want, dom)
		}
		if want := `<p id="js">ran 42</p>`; !strings.Contains(dom, want) {
			t.Errorf("load %d: DOM lacks what the page's script added, %q:\n%s", i, want, dom)
		}
	}
	if got := n.Load(); got != 3 {
		t.Errorf("the server answered %d requests for 3 loads", got)
	}
}

// TestLoadOfAnAddressNobodyServesFails: a refused connection is an error,
// not Chromium's error page returned as a DOM.
func TestLoadOfAnAddressNobodyServesFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	b := start(t, 800, 600)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dom, err := b.Load(ctx, "http://"+addr+"/")
	if err == nil || !strings.Contains(err.Error(), "ERR_CONNECTION_REFUSED") {
		t.Fatalf("load of %s (nobody listens): err %v, DOM:\n%s", addr, err, dom)
	}
}

// TestScreenshotIsTheLoadedPageAtViewportSize: the PNG has the viewport's
// size and shows the page as rendered (its background and a box at a
// known place).
func TestScreenshotIsTheLoadedPageAtViewportSize(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><html><body style="margin:0;background:#00ff00">
<div style="position:absolute;left:100px;top:200px;width:50px;height:50px;background:#ff0000"></div></body></html>`)
	}))
	defer srv.Close()
	b := start(t, 640, 480)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := b.Load(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	shot, err := b.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got.X != 640 || got.Y != 480 {
		t.Errorf("screenshot is %v, want 640x480", got)
	}
	for _, c := range []struct {
		x, y    int
		r, g, b uint32
	}{{10, 10, 0, 0xffff, 0}, {125, 225, 0xffff, 0, 0}, {600, 450, 0, 0xffff, 0}} {
		r, g, bl, _ := img.At(c.x, c.y).RGBA()
		if r != c.r || g != c.g || bl != c.b {
			t.Errorf("pixel (%d,%d) is %04x/%04x/%04x, want %04x/%04x/%04x", c.x, c.y, r, g, bl, c.r, c.g, c.b)
		}
	}
}
