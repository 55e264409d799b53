package gatewayctl

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ownWrites remembers the status writes whose result the informer cache
// has not shown yet. For each object written it keeps the
// resourceVersion the write went over: while the cache still holds that
// version, the cached status is the one from before the write, and
// diffing it would write the same status again, only to be refused as a
// conflict. After 500 new routes a sync writes 500 statuses, and the next
// sync starts before the cache has seen them all.
type ownWrites struct {
	mu   sync.Mutex
	over map[writeKey]string
	// seen is what the current sync consulted; sweep forgets the rest
	// (objects deleted meanwhile).
	seen map[writeKey]bool
}

type writeKey struct {
	kind string
	uid  types.UID
}

func newOwnWrites() *ownWrites {
	return &ownWrites{over: map[writeKey]string{}, seen: map[writeKey]bool{}}
}

// wrote records a successful status write of o, the object as sent (so
// with the resourceVersion it replaced).
func (w *ownWrites) wrote(kind string, o metav1.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.over[writeKey{kind, o.GetUID()}] = o.GetResourceVersion()
}

// pending reports whether the cached o is the version a write of ours
// replaced. A newer version ends the record.
func (w *ownWrites) pending(kind string, o metav1.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := writeKey{kind, o.GetUID()}
	rv, ok := w.over[k]
	if !ok {
		return false
	}
	if rv != o.GetResourceVersion() {
		delete(w.over, k)
		return false
	}
	w.seen[k] = true
	return true
}

// sweep forgets the records no sync consulted since the last sweep: their
// objects are gone.
func (w *ownWrites) sweep() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.over {
		if !w.seen[k] {
			delete(w.over, k)
		}
	}
	clear(w.seen)
}

// len is how many writes the cache has not shown yet.
func (w *ownWrites) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.over)
}
