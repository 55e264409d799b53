package validate

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
)

// Sum is the SHA-256 of a resource's deterministic encoding.
type Sum [sha256.Size]byte

// Memo remembers the per-resource results (ValidateAll and references) by
// content, so a resource that did not change is not walked again. The
// set-wide checks always run. A Memo belongs to one caller; it is safe for
// concurrent use.
type Memo struct {
	mu      sync.Mutex
	entries map[memoKey]memoEntry
	used    map[memoKey]bool
}

// memoKey is a resource's type URL and name.
type memoKey struct{ typ, name string }

type memoEntry struct {
	res  types.Resource // the exact message last checked
	sum  Sum
	err  error
	refs refs
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo { return &Memo{entries: map[memoKey]memoEntry{}, used: map[memoKey]bool{}} }

// Sweep forgets the entries not used since the last Sweep.
func (m *Memo) Sweep() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.entries {
		if !m.used[k] {
			delete(m.entries, k)
		}
	}
	m.used = map[memoKey]bool{}
}

// Set is like the package-level Set, reusing remembered results for
// unchanged resources. It also returns each resource's Sum, in set order.
func (m *Memo) Set(set map[resource.Type][]types.Resource) (map[resource.Type][]Sum, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	sums := map[resource.Type][]Sum{}
	have := map[resource.Type]map[string]bool{}
	var checked []memoEntry
	opts := proto.MarshalOptions{Deterministic: true}
	var buf []byte // one encoding buffer for every resource: only its hash is kept
	for _, typ := range slices.Sorted(mapsKeys(set)) {
		have[typ] = make(map[string]bool, len(set[typ]))
		for _, res := range set[typ] {
			name := cachev3.GetResourceName(res)
			id := func() string { return shortType(typ) + " " + strconv.Quote(name) }
			key := memoKey{typ, name}
			e, ok := m.entries[key]
			// The same message as last time (callers never modify a
			// resource once built) needs no encoding or checks.
			if !ok || e.res != res {
				b, err := opts.MarshalAppend(buf[:0], res)
				if err != nil {
					return nil, fmt.Errorf("%s: encode: %w", id(), err)
				}
				buf = b
				sum := Sum(sha256.Sum256(b))
				if !ok || e.sum != sum {
					e = memoEntry{sum: sum, refs: refs{}}
					if err := Message(res); err != nil {
						e.err = fmt.Errorf("%s: %w", id(), err)
					}
					collect(res, id(), e.refs)
					if l, ok := res.(*listener.Listener); ok {
						if fe := errors.Join(filterChains(l)...); fe != nil {
							e.err = errors.Join(e.err, fe)
						}
					}
				}
				e.res = res
				m.entries[key] = e
			}
			sums[typ] = append(sums[typ], e.sum)
			if name == "" {
				errs = append(errs, fmt.Errorf("%s: empty name", id()))
			}
			if have[typ][name] {
				errs = append(errs, fmt.Errorf("%s: duplicate name", id()))
			}
			have[typ][name] = true
			m.used[key] = true
			if e.err != nil {
				errs = append(errs, e.err)
			}
			checked = append(checked, e)
		}
	}
	errs = append(errs, listenerPorts(set[resource.ListenerType])...)
	// Dangling references: only the missing ones are collected.
	missing := refs{}
	for _, e := range checked {
		for t, byName := range e.refs {
			for n, from := range byName {
				if !have[t][n] {
					for _, f := range from {
						missing.add(t, n, f)
					}
				}
			}
		}
	}
	errs = append(errs, dangling(have, missing)...)
	return sums, errors.Join(errs...)
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func dangling(have map[resource.Type]map[string]bool, want refs) []error {
	var errs []error
	for _, typ := range []resource.Type{resource.RouteType, resource.ClusterType, resource.EndpointType, resource.SecretType} {
		for _, n := range slices.Sorted(mapsKeys(want[typ])) {
			if !have[typ][n] {
				errs = append(errs, fmt.Errorf("dangling reference: %s refers to %s %q, which is not in the set", strings.Join(want[typ][n], ", "), shortType(typ), n))
			}
		}
	}
	return errs
}
