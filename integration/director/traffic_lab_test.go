//go:build lab

package director_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/moby/ipvs"
)

// stream is one long-lived connection exchanging a counter every tick.
type stream struct {
	mu     sync.Mutex
	lastOK time.Time
	n      int
	err    error
}

func (s *stream) run(ctx context.Context, c io.ReadWriter, setDeadline func(time.Time) error, tick time.Duration) {
	buf, back := make([]byte, 8), make([]byte, 8)
	for i := uint64(0); ctx.Err() == nil; i++ {
		binary.BigEndian.PutUint64(buf, i)
		_ = setDeadline(time.Now().Add(30 * time.Second))
		_, err := c.Write(buf)
		if err == nil {
			_, err = io.ReadFull(c, back)
		}
		if err == nil && string(back) != string(buf) {
			err = fmt.Errorf("echo mismatch at %d", i)
		}
		s.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				s.err = err
			}
			s.mu.Unlock()
			return
		}
		s.lastOK, s.n = time.Now(), s.n+1
		s.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(tick):
		}
	}
}

func (s *stream) state() (time.Time, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastOK, s.n, s.err
}

// openStreams dials n streams to the VIP from the client and runs them
// until ctx ends; wg is done when all have stopped.
func (d *dc) openStreams(ctx context.Context, n int, tick time.Duration) ([]*stream, *sync.WaitGroup, error) {
	return d.openStreamsTo(ctx, vip+":80", n, tick)
}

// openStreamsTo is openStreams to service (VIP:port, [IPv6]:port).
func (d *dc) openStreamsTo(ctx context.Context, service string, n int, tick time.Duration) ([]*stream, *sync.WaitGroup, error) {
	var ss []*stream
	var wg sync.WaitGroup
	for i := range n {
		c, err := d.client.DialContext(ctx, "tcp", service)
		if err != nil {
			return nil, nil, fmt.Errorf("stream %d: dial %s: %w", i, service, err)
		}
		s := &stream{}
		ss = append(ss, s)
		wg.Go(func() { defer c.Close(); s.run(ctx, c, c.SetDeadline, tick) })
	}
	return ss, &wg, nil
}

// allProgressedSince reports whether every stream exchanged data after t
// (or one failed: errors are checked by the caller).
func allProgressedSince(ss []*stream, t time.Time) bool {
	for _, s := range ss {
		last, _, err := s.state()
		if err != nil {
			return true
		}
		if !last.After(t) {
			return false
		}
	}
	return true
}

func broken(ss []*stream) (int, error) {
	n := 0
	var first error
	for _, s := range ss {
		if _, _, err := s.state(); err != nil {
			n++
			if first == nil {
				first = err
			}
		}
	}
	return n, first
}

// request opens one short connection to the VIP: connect, echo, close.
func (d *dc) request() error { return d.requestTo(vip + ":80") }

// requestTo is request to service (VIP:port, [IPv6]:port).
func (d *dc) requestTo(service string) error {
	c, err := d.client.DialContext(context.Background(), "tcp", service)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	msg := []byte("tlb-ping")
	if _, err := c.Write(msg); err != nil {
		return err
	}
	_, err = io.ReadFull(c, make([]byte, len(msg)))
	return err
}

// load sends short requests from several workers until ctx ends.
type load struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	firstErr   error
}

// run makes each of workers call request in a loop until ctx ends.
func (l *load) run(ctx context.Context, workers int, request func() error) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := request(); err != nil {
					if ctx.Err() != nil {
						return
					}
					l.failed.Add(1)
					l.mu.Lock()
					if l.firstErr == nil {
						l.firstErr = err
					}
					l.mu.Unlock()
					continue
				}
				l.ok.Add(1)
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	return &wg
}

// ipvsConns counts director i's IPVS connection entries for VIP:80.
func (d *dc) ipvsConns(i int, state string) int {
	return d.ipvsConnsTo(i, vip+":80", state, nil)
}

// ipvsConnsTo counts director i's IPVS connection entries for service
// (VIP:port) in state ("" for any) whose client (ip:port) is one of
// client's (nil for any).
func (d *dc) ipvsConnsTo(i int, service, state string, client func(string) bool) int {
	out, _ := d.directors[i].Cmd("ipvsadm", "-Lnc").CombinedOutput()
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		// TCP 14:59  ESTABLISHED 198.18.0.2:51754 203.0.113.10:443 198.18.12.2:443
		f := strings.Fields(line)
		if len(f) >= 6 && f[4] == service && (state == "" || f[2] == state) && (client == nil || client(f[3])) {
			n++
		}
	}
	return n
}

// weights reads director i's real-server weights for the VIP's port 80.
func (d *dc) weights(i int) map[string]string {
	return d.weightsOf(i, vip+":80")
}

// weightsOf reads director i's real-server weights of service (VIP:port),
// by real server address, over netlink (quick: no process to start in
// the emulated VM, so a change is seen when it happens).
func (d *dc) weightsOf(i int, service string) map[string]string {
	w := map[string]string{}
	d.withService(i, service, func(h *ipvs.Handle, svc *ipvs.Service) {
		dests, err := h.GetDestinations(svc)
		if err != nil {
			return
		}
		for _, dst := range dests {
			w[dst.Address.String()] = strconv.Itoa(dst.Weight)
		}
	})
	return w
}

// ipvsPackets returns director i's packet counters of service (VIP:port):
// packets in (client to gateway, tunnelled) and out (replies through the
// director, which direct server return keeps at 0); -1 when it has no
// such service.
func (d *dc) ipvsPackets(i int, service string) (in, out int64) {
	in, out = -1, -1
	d.withService(i, service, func(_ *ipvs.Handle, svc *ipvs.Service) {
		in, out = int64(svc.Stats.PacketsIn), int64(svc.Stats.PacketsOut)
	})
	return in, out
}

// withService calls fn with director i's IPVS service (VIP:port, TCP),
// if it has one.
func (d *dc) withService(i int, service string, fn func(*ipvs.Handle, *ipvs.Service)) {
	ap, err := netip.ParseAddrPort(service)
	if err != nil {
		return
	}
	h, err := ipvs.New(d.directors[i].NsPath())
	if err != nil {
		return
	}
	defer h.Close()
	svcs, err := h.GetServices()
	if err != nil {
		return
	}
	for _, svc := range svcs {
		if a, ok := netip.AddrFromSlice(svc.Address); ok && a.Unmap() == ap.Addr() && svc.Port == ap.Port() && svc.Protocol == syscall.IPPROTO_TCP {
			fn(h, svc)
			return
		}
	}
}

// newFlows sends n requests and returns how many each gateway accepted.
func (d *dc) newFlows(n int) ([]int64, error) {
	before := make([]int64, len(d.accepted))
	for i, a := range d.accepted {
		before[i] = a.Load()
	}
	for i := range n {
		if err := d.request(); err != nil {
			return nil, fmt.Errorf("request %d: %w", i, err)
		}
	}
	out := make([]int64, len(d.accepted))
	for i, a := range d.accepted {
		out[i] = a.Load() - before[i]
	}
	return out, nil
}

// openSpreadStreams opens n streams (see openStreams), waits until each
// exchanged data and fails the test unless ECMP spread them over both
// directors; event names what the test does to them next, for the log.
func (d *dc) openSpreadStreams(ctx context.Context, t *testing.T, n int, event string) ([]*stream, *sync.WaitGroup) {
	t.Helper()
	return d.openSpreadStreamsTo(ctx, t, vip+":80", n, event)
}

// openSpreadStreamsTo is openSpreadStreams to service (VIP:port, [IPv6]:port).
func (d *dc) openSpreadStreamsTo(ctx context.Context, t *testing.T, service string, n int, event string) ([]*stream, *sync.WaitGroup) {
	t.Helper()
	ss, wg, err := d.openStreamsTo(ctx, service, n, 200*time.Millisecond)
	if err != nil {
		d.diagnose(t)
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "every stream to "+service+" exchanged data", func() bool { return allProgressedSince(ss, time.Time{}) })
	per := []int{d.ipvsConnsTo(0, service, "ESTABLISHED", nil), d.ipvsConnsTo(1, service, "ESTABLISHED", nil)}
	t.Logf("streams to %s per director before the %s (IPVS ESTABLISHED entries): %v", service, event, per)
	if per[0] == 0 || per[1] == 0 {
		t.Fatalf("ECMP did not spread %d streams over both directors: %v", n, per)
	}
	return ss, wg
}

// dropAllTraffic makes director i's node drop every packet in and out (an
// nftables table of that name), as if its link were cut or it lost power:
// its peers get no FIN and no BFD packet.
func (d *dc) dropAllTraffic(t *testing.T, i int, table string) {
	t.Helper()
	d.directors[i].Run(t, "nft", "add table inet "+table+"; "+
		"add chain inet "+table+" drop_input { type filter hook input priority -300; policy drop; }; "+
		"add chain inet "+table+" drop_output { type filter hook output priority -300; policy drop; }")
}
