package dsl

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// Dir is the DSL directory source. A file that turns bad (a parse error,
// a certificate or key file that no longer loads) is reported and its
// last good version stays, as long as the file exists; a file that was
// never good, or is deleted, is not served. Among themselves DSL objects
// claim in the order their files first loaded (model.Service.FirstLoad):
// a file added later never takes a VIP:port, a name or a host from one
// already served, whatever its name. A replica that starts while a file
// is bad does not have its last good version: render the directory
// (l7 render) before it reaches the gateways.
type Dir struct {
	path     string
	certDirs []string
	now      func() time.Time
	group    string
	// standIn, when set, replaces every key and CA file (WithoutKeys).
	standIn *tlscert.StandIn
	parsed  map[string]fileState
	// reads counts the DSL files read (tests see which were skipped).
	reads int
	// good is the last good result of each file: what is served while the
	// file is bad.
	good map[string]fileResult
	// firstLoad is the load at which each present file first appeared
	// (0 for the first load); loads counts the loads done.
	firstLoad map[string]uint64
	loads     uint64
}

type fileState struct {
	raw []byte
	doc *Doc
	// stamp is the file's identity when it was read at readAt
	// (stamp.go): a settled file whose stamp has not changed is not read
	// again.
	stamp  fileStamp
	readAt time.Time
}

// fileResult is what one file contributes to the config.
type fileResult struct {
	doc   *Doc
	certs []model.Certificate
}

// NewDir returns a source reading the *.yaml and *.yml files of path.
// Certificate and key files are read only from path and certDirs; now is
// the clock their validity is checked against.
func NewDir(path string, now func() time.Time, certDirs ...string) *Dir {
	return &Dir{path: path, now: now, certDirs: append([]string{path}, certDirs...), parsed: map[string]fileState{},
		good: map[string]fileResult{}, firstLoad: map[string]uint64{}}
}

// ForGroup makes the directory load only the services and gateways of
// group: the files of other groups are parsed (so their errors are still
// reported) but none of their certificate, key or CA files is opened, so
// no key of another group is ever read into this process. An empty group
// loads every group (tools that render all of them).
func (d *Dir) ForGroup(group string) *Dir {
	d.group = group
	return d
}

// Path returns the directory read.
func (d *Dir) Path() string { return d.path }

// Load reads every file and returns the config built from the good ones
// (and the last good version of those that turned bad) and one error per
// bad file. err is set when the directory itself could not be read: then
// nothing was read and cfg must not be published.
func (d *Dir) Load() (cfg model.Config, fileErrs []error, err error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return model.Config{}, nil, fmt.Errorf("read config directory %s: %w", d.path, err)
	}
	load := d.loads
	d.loads++
	present := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || (!strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml")) {
			continue
		}
		present[name] = true
		if _, ok := d.firstLoad[name]; !ok {
			d.firstLoad[name] = load
		}
		res, skip, err := d.loadFile(name)
		switch {
		case err != nil:
			fileErrs = append(fileErrs, err)
			last, ok := d.good[name]
			if !ok {
				continue
			}
			res = last
		case skip:
			delete(d.good, name)
			continue
		default:
			d.good[name] = res
		}
		add(&cfg, res.doc, res.certs, d.firstLoad[name])
	}
	for name := range d.parsed {
		if !present[name] {
			delete(d.parsed, name)
		}
	}
	for name := range d.good {
		if !present[name] {
			delete(d.good, name)
		}
	}
	for name := range d.firstLoad {
		if !present[name] {
			delete(d.firstLoad, name)
		}
	}
	slices.SortFunc(cfg.Certificates, func(a, b model.Certificate) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Gateway.Origin, b.Gateway.Origin))
	})
	return cfg, fileErrs, nil
}

// loadFile parses one file (reusing the parse of an unchanged, settled
// file without reading it, see stamp.go) and reads the files it names. skip is set for a file of another group.
func (d *Dir) loadFile(name string) (res fileResult, skip bool, err error) {
	path := filepath.Join(d.path, name)
	st, ok := d.parsed[name]
	if !ok || !st.settledAs(path) {
		stamp, readAt := stampOf(path), time.Now()
		raw, err := readLimited(path)
		if err != nil {
			delete(d.parsed, name)
			return fileResult{}, false, &FieldError{File: name, Msg: err.Error()}
		}
		d.reads++
		if !ok || !bytes.Equal(st.raw, raw) {
			doc, err := Parse(name, raw)
			if err != nil {
				delete(d.parsed, name)
				return fileResult{}, false, err
			}
			st = fileState{raw: raw, doc: doc}
		}
		st.stamp, st.readAt = stamp, readAt
		d.parsed[name] = st
	}
	if d.group != "" && docGroup(st.doc) != d.group {
		return fileResult{}, true, nil
	}
	if d.standIn != nil {
		return d.standInResult(name, st.doc), false, nil
	}
	// Certificates are read on every load: a renewed key file must be
	// picked up even when the DSL file did not change.
	certs, err := d.loadCerts(name, st.doc)
	if err != nil {
		return fileResult{}, false, err
	}
	doc, err := d.loadCAs(name, st.doc)
	if err != nil {
		return fileResult{}, false, err
	}
	if doc.Service != nil && doc.Service.JWT != nil {
		svc, err := d.loadJWTKeys(name, *doc.Service, doc.JWTFiles)
		if err != nil {
			return fileResult{}, false, err
		}
		doc = &Doc{Service: &svc}
	}
	return fileResult{doc: doc, certs: certs}, false, nil
}

// docGroup is the gateway group of a parsed file.
func docGroup(doc *Doc) string {
	if doc.Service != nil {
		return doc.Service.Group
	}
	if doc.Gateway != nil {
		return doc.Gateway.Group
	}
	if doc.Interceptors != nil {
		return doc.Interceptors.Group
	}
	return ""
}

func add(cfg *model.Config, doc *Doc, certs []model.Certificate, firstLoad uint64) {
	if doc.Service != nil {
		s := *doc.Service
		s.FirstLoad = firstLoad
		cfg.Services = append(cfg.Services, s)
	}
	if doc.Gateway != nil {
		g := *doc.Gateway
		g.FirstLoad = firstLoad
		cfg.Gateways = append(cfg.Gateways, g)
	}
	if doc.Interceptors != nil {
		cfg.Interceptors = append(cfg.Interceptors, *doc.Interceptors)
	}
	cfg.Certificates = append(cfg.Certificates, certs...)
}

// readLimited reads a DSL file. A named pipe or device is refused before
// it is opened and the open does not block, so neither hangs a reload.
func readLimited(path string) ([]byte, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("file is larger than %d bytes", MaxFileSize)
	}
	return b, nil
}

// loadCerts reads the certificate and key files a gateway names into
// memory, after tlscert's checks: files inside the config directory or the
// certificate directories, regular and small; the key matching the
// certificate; the certificate valid now. Relative paths are relative to
// the config directory.
func (d *Dir) loadCerts(file string, doc *Doc) ([]model.Certificate, error) {
	var out []model.Certificate
	for _, cf := range doc.CertFiles {
		chain, err := tlscert.ReadFile(d.abs(cf.CertFile), d.certDirs)
		if err != nil {
			return nil, &FieldError{File: file, Field: "certificate " + cf.Name + " certFile", Msg: err.Error()}
		}
		key, err := tlscert.ReadFile(d.abs(cf.KeyFile), d.certDirs)
		if err != nil {
			// The path is not secret; the errors carry only it.
			return nil, &FieldError{File: file, Field: "certificate " + cf.Name + " keyFile", Msg: err.Error()}
		}
		if d.now == nil {
			clear(key)
			return nil, &FieldError{File: file, Field: "certificate " + cf.Name, Msg: "no clock to check the certificate's validity against"}
		}
		_, err = tlscert.Check(chain, key, d.now())
		if err != nil {
			clear(key)
			return nil, &FieldError{File: file, Field: "certificate " + cf.Name,
				Msg: fmt.Sprintf("certFile %s, keyFile %s: %v", cf.CertFile, cf.KeyFile, err)}
		}
		out = append(out, model.Certificate{Name: cf.Name, Gateway: doc.Gateway.ID(), Origin: model.Origin(file), Chain: chain, Key: model.NewPrivateKey(key)})
		clear(key)
	}
	return out, nil
}

func (d *Dir) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(d.path, p)
}
