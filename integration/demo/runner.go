package demo

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// runner implements topo.T for a program: Fatalf aborts the demo with an
// error, Cleanup runs in reverse order when the demo ends.
type runner struct {
	out      io.Writer
	verbose  bool
	mu       sync.Mutex
	cleanups []func()
}

type abort struct{ err error }

func (r *runner) Helper() {}

func (r *runner) Fatalf(format string, args ...any) { panic(abort{fmt.Errorf(format, args...)}) }

func (r *runner) Logf(format string, args ...any) {
	if r.verbose {
		_, _ = fmt.Fprintf(r.out, "    | "+format+"\n", args...)
	}
}

func (r *runner) Log(args ...any) {
	if r.verbose {
		_, _ = fmt.Fprintln(r.out, append([]any{"    |"}, args...)...)
	}
}

func (r *runner) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *runner) close() {
	r.mu.Lock()
	c := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for i := len(c) - 1; i >= 0; i-- {
		c[i]()
	}
}

// writeFile writes a config file into dir and aborts on error.
func (r *runner) writeFile(dir, name, content string) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.Fatalf("write %s: %v", p, err)
	}
	return p
}

// Fatal aborts the demo (tlstest's helpers call it).
func (r *runner) Fatal(args ...any) { panic(abort{errors.New(fmt.Sprint(args...))}) }
