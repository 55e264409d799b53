package topo

import (
	"bytes"
	"sync"
)

// logWriter sends a process's output to the test log line by line.
type logWriter struct {
	t      T
	prefix string
	mu     sync.Mutex
	buf    bytes.Buffer
	done   bool
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(p), nil
	}
	w.buf.Write(p)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		w.t.Log(w.prefix + string(w.buf.Next(i + 1)[:i]))
	}
	return len(p), nil
}

func (w *logWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() > 0 {
		w.t.Log(w.prefix + w.buf.String())
	}
	w.done = true
}
