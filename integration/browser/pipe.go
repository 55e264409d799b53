package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// message is one DevTools protocol message: a command (ID, Method,
// Params), its answer (ID, Result or Error) or an event (Method, Params).
// SessionID names the page a message belongs to; empty is the browser.
type message struct {
	ID        int64           `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *protocolError  `json:"error,omitempty"`
}

type protocolError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// event is a protocol event delivered to a subscriber.
type event struct {
	sessionID string
	method    string
	params    json.RawMessage
}

// conn speaks the protocol over Chromium's pipe: JSON messages, each
// ended by a NUL byte, commands written to w, answers and events read
// from r.
type conn struct {
	w io.Writer

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan message
	subs    map[int]func(event)
	nextSub int
	// closed is set, with err, when the read side ends.
	closed chan struct{}
	err    error
	wmu    sync.Mutex
}

func newConn(r io.Reader, w io.Writer) *conn {
	c := &conn{w: w, pending: map[int64]chan message{}, subs: map[int]func(event){}, closed: make(chan struct{})}
	go c.read(r)
	return c
}

// read dispatches every message from r until it ends.
func (c *conn) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	// A screenshot comes back as one base64 message of a few MiB.
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	sc.Split(splitNUL)
	var err error
	for sc.Scan() {
		var m message
		if err = json.Unmarshal(sc.Bytes(), &m); err != nil {
			err = fmt.Errorf("browser: bad protocol message: %w", err)
			break
		}
		c.dispatch(m)
	}
	if err == nil {
		err = sc.Err()
	}
	if err == nil {
		err = io.EOF
	}
	c.mu.Lock()
	c.err = err
	close(c.closed)
	c.mu.Unlock()
}

func (c *conn) dispatch(m message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.ID != 0 {
		if ch, ok := c.pending[m.ID]; ok {
			delete(c.pending, m.ID)
			ch <- m
		}
		return
	}
	e := event{sessionID: m.SessionID, method: m.Method, params: m.Params}
	for _, f := range c.subs {
		f(e)
	}
}

// splitNUL is a bufio.SplitFunc for NUL-terminated messages.
func splitNUL(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return 0, nil, io.ErrUnexpectedEOF
	}
	return 0, nil, nil
}

// subscribe calls f (under the connection's lock: f must not block or
// call back) for every event until the returned function is called.
func (c *conn) subscribe(f func(event)) (cancel func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.nextSub
	c.nextSub++
	c.subs[id] = f
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.subs, id)
	}
}

// call sends a command and decodes its result into out (when not nil).
func (c *conn) call(ctx context.Context, sessionID, method string, params, out any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("browser: %s: %w", method, err)
	}
	if params == nil {
		raw = nil
	}
	ch := make(chan message, 1)
	c.mu.Lock()
	select {
	case <-c.closed:
		c.mu.Unlock()
		return fmt.Errorf("browser: %s: chromium's pipe closed: %w", method, c.err)
	default:
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()

	b, err := json.Marshal(message{ID: id, SessionID: sessionID, Method: method, Params: raw})
	if err != nil {
		return fmt.Errorf("browser: %s: %w", method, err)
	}
	c.wmu.Lock()
	_, err = c.w.Write(append(b, 0))
	c.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("browser: send %s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("browser: %s: %s (code %d)", method, m.Error.Message, m.Error.Code)
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				return fmt.Errorf("browser: %s: decode result: %w", method, err)
			}
		}
		return nil
	case <-c.closed:
		return fmt.Errorf("browser: %s: chromium's pipe closed: %w", method, c.err)
	case <-ctx.Done():
		return fmt.Errorf("browser: %s: %w", method, ctx.Err())
	}
}

// done is closed when the read side has ended; errClosed says why.
func (c *conn) done() <-chan struct{} { return c.closed }

func (c *conn) errClosed() error {
	select {
	case <-c.closed:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	default:
		return errors.New("browser: pipe open")
	}
}
