// Package loadloop sends one request after another, on a goroutine of its
// own, until stopped, and keeps what failed: the load under which the
// upgrade and replacement tests change a running system and then count
// the failed requests.
package loadloop

import (
	"slices"
	"sync"
	"time"
)

// Loop is a running load; Stop ends it.
type Loop struct {
	mu       sync.Mutex
	sent     int
	failures []string
	stop     func()
}

// Start calls request again and again until Stop; each error it returns
// is kept, with the time, as a failure.
func Start(request func() error) *Loop {
	l := &Loop{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			err := request()
			l.mu.Lock()
			l.sent++
			if err != nil {
				l.failures = append(l.failures, time.Now().Format("15:04:05.000")+": "+err.Error())
			}
			l.mu.Unlock()
		}
	}()
	l.stop = sync.OnceFunc(func() { close(stop); <-done })
	return l
}

// Counts returns the requests sent so far and the failures among them.
func (l *Loop) Counts() (sent int, failures []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent, slices.Clone(l.failures)
}

// Sent returns the requests sent so far.
func (l *Loop) Sent() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent
}

// Stop ends the loop once the request under way returns; calling it again
// does nothing.
func (l *Loop) Stop() { l.stop() }
