package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Options say how to start the browser.
type Options struct {
	// Binary is Chromium's executable (see Find).
	Binary string
	// Dir holds the browser's profile and HOME; it must exist and belong
	// to this browser alone (a test's TempDir).
	Dir string
	// Command makes the command that runs the browser: exec.Command when
	// nil; topo.Node.Cmd runs it inside a lab node's network namespace.
	Command func(name string, args ...string) *exec.Cmd
	// Width and Height are the viewport in CSS pixels, and so the size of
	// a screenshot (default 1280x2000).
	Width, Height int
	// Flags are added to the command line after the package's own.
	Flags []string
}

// Flags are the command-line flags every browser starts with: as root
// (no sandbox), software rendering, and nothing that reaches for the
// network or does work at start-up that loading a page does not need (the
// machines have no network beyond their own).
var Flags = []string{
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-extensions",
	"--disable-breakpad",
	"--mute-audio",
	"--hide-scrollbars",
	"--remote-debugging-pipe",
}

// Browser is one running Chromium with one page (tab) to load pages in.
type Browser struct {
	cmd     *exec.Cmd
	conn    *conn
	session string
	stderr  *tail
	exited  chan struct{}
	waitErr error
	close   sync.Once
}

// Find returns the path of Debian's headless Chromium (package
// chromium-headless-shell: Chromium's own headless browser, the same
// Blink, V8 and network stack as the full browser without its user
// interface, and several times quicker to start under the lab VM's
// emulated CPU), or an error that says to run tools/deps.sh.
func Find() (string, error) {
	const debian = "/usr/lib/chromium/chromium-headless-shell"
	if _, err := os.Stat(debian); err != nil {
		return "", fmt.Errorf("browser: chromium-headless-shell, Debian's headless Chromium, is not installed (run tools/deps.sh): %w", err)
	}
	return debian, nil
}

// Start starts the browser and opens its page; ctx bounds the start only.
// The caller must Close the browser.
func Start(ctx context.Context, opts Options) (*Browser, error) {
	if opts.Binary == "" || opts.Dir == "" {
		return nil, errors.New("browser: Options.Binary and Options.Dir are required")
	}
	if opts.Width == 0 {
		opts.Width, opts.Height = 1280, 2000
	}
	command := opts.Command
	if command == nil {
		command = exec.Command
	}
	// Chromium reads commands from fd 3 and writes to fd 4.
	cmdR, toBrowser, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("browser: pipe: %w", err)
	}
	fromBrowser, outW, err := os.Pipe()
	if err != nil {
		_ = cmdR.Close()
		_ = toBrowser.Close()
		return nil, fmt.Errorf("browser: pipe: %w", err)
	}
	args := append(append([]string{}, Flags...), opts.Flags...)
	args = append(args, "--user-data-dir="+filepath.Join(opts.Dir, "profile"),
		fmt.Sprintf("--window-size=%d,%d", opts.Width, opts.Height), "about:blank")
	cmd := command(opts.Binary, args...)
	cmd.Env = append(os.Environ(), "HOME="+opts.Dir)
	cmd.Dir = opts.Dir
	cmd.ExtraFiles = []*os.File{cmdR, outW}
	b := &Browser{cmd: cmd, stderr: &tail{max: 16 << 10}, exited: make(chan struct{})}
	cmd.Stderr = b.stderr
	err = cmd.Start()
	_ = cmdR.Close()
	_ = outW.Close()
	if err != nil {
		_ = toBrowser.Close()
		_ = fromBrowser.Close()
		return nil, fmt.Errorf("browser: start %s: %w", opts.Binary, err)
	}
	go func() {
		b.waitErr = cmd.Wait()
		_ = toBrowser.Close()
		close(b.exited)
	}()
	b.conn = newConn(fromBrowser, toBrowser)
	if err := b.openPage(ctx, opts.Width, opts.Height); err != nil {
		b.Close()
		return nil, b.explain(err)
	}
	return b, nil
}

// openPage creates the page every load uses and sets it up: lifecycle
// events (to know when a load ends), no HTTP cache (every load asks the
// server), the viewport.
func (b *Browser) openPage(ctx context.Context, width, height int) error {
	// The page the browser opened at start (about:blank) serves, rather
	// than a new one: one renderer process fewer to start.
	var targets struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	if err := b.conn.call(ctx, "", "Target.getTargets", nil, &targets); err != nil {
		return err
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	for _, ti := range targets.TargetInfos {
		if ti.Type == "page" {
			target.TargetID = ti.TargetID
			break
		}
	}
	if target.TargetID == "" {
		if err := b.conn.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
			return err
		}
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.conn.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return err
	}
	b.session = attached.SessionID
	for _, c := range []struct {
		method string
		params any
	}{
		{"Page.enable", nil},
		{"Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}},
		{"Network.enable", nil},
		{"Network.setCacheDisabled", map[string]any{"cacheDisabled": true}},
		{"Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}},
	} {
		if err := b.conn.call(ctx, b.session, c.method, c.params, nil); err != nil {
			return err
		}
	}
	return nil
}

// Close ends the browser: politely over the protocol, killed if it has
// not exited 10 seconds later.
func (b *Browser) Close() {
	b.close.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.conn.call(ctx, "", "Browser.close", nil, nil)
		select {
		case <-b.exited:
		case <-ctx.Done():
			_ = b.cmd.Process.Kill()
			<-b.exited
		}
	})
}

// explain adds to err how the browser ended, when it has, and the end of
// what it wrote to stderr.
func (b *Browser) explain(err error) error {
	select {
	case <-b.exited:
		how := "exit status 0"
		if b.waitErr != nil {
			how = b.waitErr.Error()
		}
		return fmt.Errorf("%w (chromium exited: %s; its stderr ends with:\n%s)", err, how, b.stderr.String())
	default:
		return err
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
