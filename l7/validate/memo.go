package validate

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
)

// Sum is the SHA-256 of a resource's deterministic encoding: equal content
// gives an equal Sum, in every process, and its hex form is the delta
// version go-control-plane sends (xds relies on it).
type Sum [sha256.Size]byte

// Memo checks the successive resource sets of one client kind (one
// snapshot key) and remembers what it found per resource, so a publish
// costs what changed, not the whole set:
//
//   - a resource that is the same message as last time (callers never
//     modify a resource once built) is neither encoded nor checked again;
//   - one that is a new message is encoded and hashed, and checked only
//     when its content (the Sum) differs;
//   - a route configuration's virtual hosts are checked one by one, each
//     once per message (see routes.go), so a new host does not walk the
//     other 3,000;
//   - references (dangling or not) are checked for the new and changed
//     resources only, as long as the last set's all resolved and none of
//     its resources is gone; otherwise for all.
//
// The verdict is the same as the package-level Set's on the whole set:
// what is remembered is a function of a resource's content, and the
// set-wide checks (names, ports, references) see the whole set. A Memo
// belongs to one caller; it is safe for concurrent use.
type Memo struct {
	mu      sync.Mutex
	entries map[memoKey]*memoEntry
	// order is each type's entries in the last set's order: a resource
	// that is the same message as the one at its place there is found
	// without hashing its name.
	order map[resource.Type][]*memoEntry
	// gen counts the calls of Set; an entry's seen is the last one whose
	// set held it.
	gen uint64
	// last is how many resources the last set held, and resolved whether
	// every reference in it resolved (and no name was there twice).
	last     int
	resolved bool
	buf      []byte // one encoding buffer for every resource: only its hash is kept
}

// memoKey is a resource's type URL and name.
type memoKey struct{ typ, name string }

type memoEntry struct {
	key  memoKey
	res  types.Resource // the exact message last checked
	sum  Sum
	err  error
	refs []target // what it refers to, each name once
	seen uint64
	pos  int // its place in order
	// vhosts are a route configuration's virtual hosts, checked one by
	// one (see routes.go).
	vhosts map[*route.VirtualHost]*vhostResult
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo {
	return &Memo{entries: map[memoKey]*memoEntry{}, order: map[resource.Type][]*memoEntry{}}
}

// Set is like the package-level Set, reusing what it found in earlier
// sets for resources that did not change. It also returns each
// resource's Sum, in set order.
func (m *Memo) Set(set map[resource.Type][]types.Resource) (map[resource.Type][]Sum, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	var p memoPass
	sums := make(map[resource.Type][]Sum, len(set))
	for _, typ := range slices.Sorted(mapsKeys(set)) {
		ss, err := m.setType(&p, typ, set[typ])
		if err != nil {
			return nil, err
		}
		sums[typ] = ss
	}
	for typ := range m.order {
		if _, ok := set[typ]; !ok {
			delete(m.order, typ)
		}
	}
	p.errs = append(p.errs, listenerPorts(set[resource.ListenerType])...)

	removed := p.kept < m.last
	current := m.forgetGone(removed)
	missing := m.missing(m.toResolve(p.fresh, removed))
	p.errs = append(p.errs, missing...)
	m.last, m.resolved = current, len(missing) == 0 && !p.dup
	return sums, errors.Join(p.errs...)
}

// memoPass is what one call of Set finds as it walks the set.
type memoPass struct {
	errs  []error
	fresh []*memoEntry // new or changed content: their references are checked
	kept  int          // resources the last set held too
	dup   bool         // a name is there twice
}

// setType walks the resources of one type, checking those whose content
// changed, and returns their Sums in order.
func (m *Memo) setType(p *memoPass, typ resource.Type, resources []types.Resource) ([]Sum, error) {
	ss := make([]Sum, 0, len(resources))
	c := memoCursor{prev: m.order[typ]}
	order := make([]*memoEntry, 0, len(resources))
	for _, res := range resources {
		e, twice := m.entryFor(p, &c, typ, res)
		if e.res != res {
			changed, err := m.check(e, typ, e.key.name, res)
			if err != nil {
				return nil, err
			}
			if changed {
				p.fresh = append(p.fresh, e)
			}
		}
		ss = append(ss, e.sum)
		if !twice {
			e.seen, e.pos = m.gen, len(order)
			order = append(order, e)
		}
		if e.key.name == "" {
			p.errs = append(p.errs, fmt.Errorf("%s: empty name", resourceID(typ, e.key.name)))
		}
		if e.err != nil {
			p.errs = append(p.errs, e.err)
		}
	}
	m.order[typ] = order
	return ss, nil
}

// memoCursor walks a type's entries in the last set's order beside the
// new set: j is where the next resource is expected.
type memoCursor struct {
	prev []*memoEntry
	j    int
}

// entryFor returns the entry of res: the one at the cursor when it is
// the same message, else the one of its name, new when there is none.
// A name already seen in this set is refused (a duplicate); the second
// resource is still checked, on its own, in an entry that is not kept
// (twice).
func (m *Memo) entryFor(p *memoPass, c *memoCursor, typ resource.Type, res types.Resource) (e *memoEntry, twice bool) {
	if c.j < len(c.prev) && c.prev[c.j].res == res && c.prev[c.j].seen == m.gen-1 {
		e = c.prev[c.j] // the same message at its place in the last set
		c.j++
		p.kept++
		return e, false
	}
	key := memoKey{typ, cachev3.GetResourceName(res)}
	e = m.entries[key]
	switch {
	case e == nil:
		e = &memoEntry{key: key}
		m.entries[key] = e
	case e.seen == m.gen:
		p.dup = true
		p.errs = append(p.errs, fmt.Errorf("%s: duplicate name", resourceID(typ, key.name)))
		return &memoEntry{key: key}, true
	case e.seen == m.gen-1:
		p.kept++
		if e.pos >= c.j { // back in step after an insertion or removal
			c.j = e.pos + 1
		}
	}
	return e, false
}

// forgetGone drops the entries the current set does not hold, when some
// of the last set's are gone (removed), and returns how many it holds.
func (m *Memo) forgetGone(removed bool) int {
	current := 0
	for _, e := range m.entries {
		if e.seen == m.gen {
			current++
		} else if removed {
			// Gone from the set: forget it (a deletion during range is
			// safe in Go).
			delete(m.entries, e.key)
		}
	}
	return current
}

// toResolve returns the entries whose references are checked: the new
// and changed ones (fresh) when the last set's all resolved and none of
// its names is gone (the unchanged ones' targets are still there);
// otherwise every entry of the current set.
func (m *Memo) toResolve(fresh []*memoEntry, removed bool) []*memoEntry {
	if m.resolved && !removed {
		return fresh
	}
	var all []*memoEntry
	for _, e := range m.entries {
		if e.seen == m.gen {
			all = append(all, e)
		}
	}
	return all
}

// check encodes res into e and, when its content differs from what e
// held, checks it again. changed reports the latter.
func (m *Memo) check(e *memoEntry, typ resource.Type, name string, res types.Resource) (changed bool, err error) {
	if rc, ok := res.(*route.RouteConfiguration); ok {
		return m.checkRoutes(e, typ, name, rc)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend(m.buf[:0], res)
	if err != nil {
		return false, fmt.Errorf("%s: encode: %w", resourceID(typ, name), err)
	}
	m.buf = b
	sum := Sum(sha256.Sum256(b))
	was := e.res
	e.res = res
	if was != nil && e.sum == sum {
		return false, nil
	}
	e.sum = sum
	msgErr := Message(res)
	e.refs = targets(res)
	e.err = nil
	if msgErr != nil {
		e.err = fmt.Errorf("%s: %w", resourceID(typ, name), msgErr)
	}
	if l, ok := res.(*listener.Listener); ok {
		if fe := errors.Join(filterChains(l)...); fe != nil {
			e.err = errors.Join(e.err, fe)
		}
	}
	return true, nil
}

// missing returns the dangling references of the entries, one error per
// missing resource naming every entry that refers to it.
func (m *Memo) missing(entries []*memoEntry) []error {
	want := refs{}
	for _, e := range entries {
		from := resourceID(e.key.typ, e.key.name)
		e.eachRef(func(t target) {
			if to := m.entries[memoKey(t)]; to == nil || to.seen != m.gen {
				want.addOnce(t.typ, t.name, from)
			}
		})
	}
	for _, byName := range want {
		for _, from := range byName {
			slices.Sort(from)
		}
	}
	return dangling(want)
}

func resourceID(typ resource.Type, name string) string {
	return shortType(typ) + " " + strconv.Quote(name)
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
