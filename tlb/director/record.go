package director

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tlbproject/tlb/internal/filecap"
	"github.com/tlbproject/tlb/tlb/model"
)

// RecordFile is the name of the ownership record in the runtime directory.
const RecordFile = "director-services.json"

// Record remembers which IPVS services the director created, so that a
// restarted director still knows what it may delete. It holds service keys
// only (no secrets). With an empty directory it lives in memory only.
type Record struct {
	path  string
	owned map[model.Key]bool
}

type recordFile struct {
	Version  int      `json:"version"`
	Services []string `json:"services"`
}

// errCorruptRecord marks a record file that exists and was read but
// cannot be parsed (empty, truncated, not JSON, a bad key).
var errCorruptRecord = errors.New("unreadable ownership record")

// LoadRecord reads the record from dir/RecordFile without changing
// anything on disk (for readers such as tlb status); a missing file is an
// empty record, an unreadable one an error. dir "" keeps the record in
// memory only. The director itself uses OpenRecord.
func LoadRecord(dir string) (*Record, error) {
	r := &Record{owned: map[model.Key]bool{}}
	if dir == "" {
		return r, nil
	}
	r.path = filepath.Join(dir, RecordFile)
	data, err := filecap.Read(r.path, MaxRecordSize)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ownership record %s: %w", r.path, err)
	}
	owned, err := parseRecord(r.path, data)
	if err != nil {
		return nil, err
	}
	r.owned = owned
	return r, nil
}

func parseRecord(path string, data []byte) (map[model.Key]bool, error) {
	var f recordFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parse ownership record %s: %w: %w", path, errCorruptRecord, err)
	}
	owned := map[model.Key]bool{}
	for i, s := range f.Services {
		k, err := ParseKey(s)
		if err != nil {
			return nil, fmt.Errorf("parse ownership record %s: %w: services[%d]: %w", path, errCorruptRecord, i, err)
		}
		owned[k] = true
	}
	return owned, nil
}

// ParseKey parses "203.0.113.10:80/tcp" (the form of model.Key.String).
func ParseKey(s string) (model.Key, error) {
	addr, proto, ok := strings.Cut(s, "/")
	if !ok {
		return model.Key{}, fmt.Errorf("service key %q: want VIP:PORT/PROTOCOL", s)
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return model.Key{}, fmt.Errorf("service key %q: %w", s, err)
	}
	p := model.Protocol(proto)
	if _, ok := protoNumbers[p]; !ok {
		return model.Key{}, fmt.Errorf("service key %q: unknown protocol %q", s, proto)
	}
	return model.Key{VIP: ap.Addr(), Protocol: p, Port: ap.Port()}, nil
}

// Owns reports whether k is recorded as the director's.
func (r *Record) Owns(k model.Key) bool { return r.owned[k] }

// Keys returns the recorded keys, sorted.
func (r *Record) Keys() []model.Key {
	out := make([]model.Key, 0, len(r.owned))
	for k := range r.owned {
		out = append(out, k)
	}
	sortKeys(out)
	return out
}

// Update adds and removes keys and persists the result. On a write error
// the in-memory record still changes, so the director keeps knowing what
// it created.
func (r *Record) Update(add, remove []model.Key) error {
	changed := false
	for _, k := range add {
		if !r.owned[k] {
			r.owned[k] = true
			changed = true
		}
	}
	for _, k := range remove {
		if r.owned[k] {
			delete(r.owned, k)
			changed = true
		}
	}
	if !changed || r.path == "" {
		return nil
	}
	return r.save()
}

func sortKeys(keys []model.Key) {
	slices.SortFunc(keys, func(a, b model.Key) int { return a.Compare(b) })
}
