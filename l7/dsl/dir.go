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

// Dir is the DSL directory source. What it returns is a function of the
// directory's content alone: a bad file is left out (and reported), never
// replaced by a version this process happened to see before, so every
// replica reading the same directory builds the same config. It remembers
// parsed files only to skip parsing unchanged ones.
type Dir struct {
	path     string
	certDirs []string
	now      func() time.Time
	parsed   map[string]fileState
	// reads counts the DSL files read (tests see which were skipped).
	reads int
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

// NewDir returns a source reading the *.yaml and *.yml files of path.
// Certificate and key files are read only from path and certDirs; now is
// the clock their validity is checked against.
func NewDir(path string, now func() time.Time, certDirs ...string) *Dir {
	return &Dir{path: path, now: now, certDirs: append([]string{path}, certDirs...), parsed: map[string]fileState{}}
}

// Path returns the directory read.
func (d *Dir) Path() string { return d.path }

// Load reads every file and returns the config built from the good ones
// and one error per bad file. err is set when the directory itself could
// not be read: then nothing was read and cfg must not be published.
func (d *Dir) Load() (cfg model.Config, fileErrs []error, err error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return model.Config{}, nil, fmt.Errorf("read config directory %s: %w", d.path, err)
	}
	present := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || (!strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml")) {
			continue
		}
		present[name] = true
		path := filepath.Join(d.path, name)
		st, ok := d.parsed[name]
		if !ok || !st.settledAs(path) {
			stamp, readAt := stampOf(path), time.Now()
			raw, err := readLimited(path)
			if err != nil {
				delete(d.parsed, name)
				fileErrs = append(fileErrs, &FieldError{File: name, Msg: err.Error()})
				continue
			}
			d.reads++
			if !ok || !bytes.Equal(st.raw, raw) {
				doc, err := Parse(name, raw)
				if err != nil {
					delete(d.parsed, name)
					fileErrs = append(fileErrs, err)
					continue
				}
				st = fileState{raw: raw, doc: doc}
			}
			st.stamp, st.readAt = stamp, readAt
			d.parsed[name] = st
		}
		// Certificates are read on every load: a renewed key file must be
		// picked up even when the DSL file did not change.
		certs, err := d.loadCerts(name, st.doc)
		if err != nil {
			fileErrs = append(fileErrs, err)
			continue
		}
		doc := st.doc
		if doc, err = d.loadCAs(name, doc); err != nil {
			fileErrs = append(fileErrs, err)
			continue
		}
		if doc.Service != nil && doc.Service.JWT != nil {
			svc, err := d.loadJWTKeys(name, *doc.Service, doc.JWTFiles)
			if err != nil {
				fileErrs = append(fileErrs, err)
				continue
			}
			doc = &Doc{Service: &svc}
		}
		add(&cfg, doc, certs)
	}
	for name := range d.parsed {
		if !present[name] {
			delete(d.parsed, name)
		}
	}
	slices.SortFunc(cfg.Certificates, func(a, b model.Certificate) int { return cmp.Compare(a.Name, b.Name) })
	return cfg, fileErrs, nil
}

func add(cfg *model.Config, doc *Doc, certs []model.Certificate) {
	if doc.Service != nil {
		cfg.Services = append(cfg.Services, *doc.Service)
	}
	if doc.Gateway != nil {
		cfg.Gateways = append(cfg.Gateways, *doc.Gateway)
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
		out = append(out, model.Certificate{Name: cf.Name, Origin: model.Origin(file), Chain: chain, Key: model.NewPrivateKey(key)})
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
