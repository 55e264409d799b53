package builtin

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/bcrypt"
)

// ErrBcryptBusy is Bcrypt's answer when no comparison slot came free in
// time or too many checks already wait for one.
var ErrBcryptBusy = errors.New("too many credential checks in progress")

// Bcrypt runs the bcrypt comparisons of every basicAuth of one service:
// at most slots at a time, at most queue more waiting (each until its
// interceptor's timeout), the rest refused at once. bcrypt is slow by
// design and runs for every wrong password, before any rate limit, so
// without a bound a client sending wrong credentials in parallel takes
// every core of the l7 process, which is also its group's xDS server.
type Bcrypt struct {
	slots   chan struct{}
	queue   int32
	waiting atomic.Int32

	mu      sync.Mutex
	dummies map[int][]byte // cost -> hash of a random password
}

// NewBcrypt returns a Bcrypt running at most slots comparisons at once
// (at least 1) with at most queue checks waiting.
func NewBcrypt(slots, queue int) *Bcrypt {
	if slots < 1 {
		slots = 1
	}
	if queue < 0 {
		queue = 0
	}
	return &Bcrypt{slots: make(chan struct{}, slots), queue: int32(queue), dummies: map[int][]byte{}}
}

// Compare reports whether pass matches hash, once a slot is free. The
// error is ErrBcryptBusy when none came free before ctx ended or the
// queue was full.
func (b *Bcrypt) Compare(ctx context.Context, hash, pass []byte) (bool, error) {
	if err := b.acquire(ctx); err != nil {
		return false, err
	}
	defer func() { <-b.slots }()
	return bcrypt.CompareHashAndPassword(hash, pass) == nil, nil
}

// CompareUnknown spends what Compare spends on a hash of the given cost,
// for a user who does not exist, so the answer's delay does not tell
// which users exist. It never matches.
func (b *Bcrypt) CompareUnknown(ctx context.Context, cost int, pass []byte) error {
	_, err := b.Compare(ctx, b.dummy(cost), pass)
	return err
}

func (b *Bcrypt) acquire(ctx context.Context) error {
	select {
	case b.slots <- struct{}{}:
		return nil
	default:
	}
	if b.waiting.Add(1) > b.queue {
		b.waiting.Add(-1)
		return ErrBcryptBusy
	}
	defer b.waiting.Add(-1)
	select {
	case b.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ErrBcryptBusy
	}
}

// dummy returns a hash of a random password at cost, made once.
func (b *Bcrypt) dummy(cost int) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h, ok := b.dummies[cost]; ok {
		return h
	}
	p := make([]byte, 16)
	_, _ = rand.Read(p)
	h, err := bcrypt.GenerateFromPassword(p, cost)
	if err != nil { // a cost out of bcrypt's range: the file's reader refuses those
		h, _ = bcrypt.GenerateFromPassword(p, bcrypt.DefaultCost)
	}
	b.dummies[cost] = h
	return h
}

// typicalCost is the cost most hashes of a users file use (the higher on
// a tie), the cost an unknown user's comparison must take; htpasswd -B's
// 5 for an empty file.
func typicalCost(hashes map[string][]byte) int {
	count := map[int]int{}
	best, n := 5, 0
	for _, h := range hashes {
		c, err := bcrypt.Cost(h)
		if err != nil {
			continue
		}
		count[c]++
		if count[c] > n || (count[c] == n && c > best) {
			best, n = c, count[c]
		}
	}
	return best
}
