package director

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// LoadRecord reads the record from dir/RecordFile; a missing file is an
// empty record. dir "" keeps the record in memory only.
func LoadRecord(dir string) (*Record, error) {
	r := &Record{owned: map[model.Key]bool{}}
	if dir == "" {
		return r, nil
	}
	r.path = filepath.Join(dir, RecordFile)
	data, err := os.ReadFile(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ownership record %s: %w", r.path, err)
	}
	var f recordFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parse ownership record %s: %w", r.path, err)
	}
	for i, s := range f.Services {
		k, err := ParseKey(s)
		if err != nil {
			return nil, fmt.Errorf("parse ownership record %s: services[%d]: %w", r.path, i, err)
		}
		r.owned[k] = true
	}
	return r, nil
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

func (r *Record) save() error {
	f := recordFile{Version: 1}
	for _, k := range r.Keys() {
		f.Services = append(f.Services, k.String())
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode ownership record: %w", err)
	}
	dir := filepath.Dir(r.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create runtime directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, RecordFile+".tmp*")
	if err != nil {
		return fmt.Errorf("write ownership record %s: %w", r.path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write ownership record %s: %w", r.path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write ownership record %s: %w", r.path, err)
	}
	if err := os.Rename(tmp.Name(), r.path); err != nil {
		return fmt.Errorf("replace ownership record %s: %w", r.path, err)
	}
	return nil
}

func sortKeys(keys []model.Key) {
	slices.SortFunc(keys, func(a, b model.Key) int { return a.Compare(b) })
}
