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

	"github.com/tlbproject/tlb/l7/model"
)

// Dir is the DSL directory source. It remembers the last good version of
// every file, so a file that turns bad keeps serving its last good content
// until it is fixed or deleted.
type Dir struct {
	path     string
	lastGood map[string]fileState
}

type fileState struct {
	raw   []byte
	doc   *Doc
	certs []model.Certificate
}

// NewDir returns a source reading the *.yaml and *.yml files of path.
func NewDir(path string) *Dir {
	return &Dir{path: path, lastGood: map[string]fileState{}}
}

// Path returns the directory read.
func (d *Dir) Path() string { return d.path }

// Load reads every file and returns the config built from the good ones
// (and the last good versions of bad ones), and one error per bad file.
func (d *Dir) Load() (model.Config, []error) {
	var errs []error
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return d.config(), []error{fmt.Errorf("read config directory %s: %w", d.path, err)}
	}
	present := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || (!strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml")) {
			continue
		}
		present[name] = true
		raw, err := readLimited(filepath.Join(d.path, name))
		if err != nil {
			errs = append(errs, &FieldError{File: name, Msg: err.Error()})
			continue
		}
		if st, ok := d.lastGood[name]; ok && bytes.Equal(st.raw, raw) {
			if certs, err := d.loadCerts(name, st.doc); err == nil {
				st.certs = certs
				d.lastGood[name] = st
				continue
			} else {
				errs = append(errs, err)
				continue
			}
		}
		doc, err := Parse(name, raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		certs, err := d.loadCerts(name, doc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d.lastGood[name] = fileState{raw: raw, doc: doc, certs: certs}
	}
	for name := range d.lastGood {
		if !present[name] {
			delete(d.lastGood, name)
		}
	}
	return d.config(), errs
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
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
// memory. Relative paths are relative to the config directory.
func (d *Dir) loadCerts(file string, doc *Doc) ([]model.Certificate, error) {
	var out []model.Certificate
	for _, cf := range doc.CertFiles {
		chain, err := readLimited(d.abs(cf.CertFile))
		if err != nil {
			return nil, &FieldError{File: file, Field: "certificate " + cf.Name + " certFile", Msg: err.Error()}
		}
		key, err := readLimited(d.abs(cf.KeyFile))
		if err != nil {
			// The path is not secret; the error from os carries only it.
			return nil, &FieldError{File: file, Field: "certificate " + cf.Name + " keyFile", Msg: err.Error()}
		}
		if !bytes.Contains(chain, []byte("-----BEGIN CERTIFICATE-----")) {
			return nil, &FieldError{File: file, Field: "certificate " + cf.Name + " certFile", Msg: "no PEM certificate in " + cf.CertFile}
		}
		if !bytes.Contains(key, []byte("PRIVATE KEY-----")) {
			return nil, &FieldError{File: file, Field: "certificate " + cf.Name + " keyFile", Msg: "no PEM private key in " + cf.KeyFile}
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

func (d *Dir) config() model.Config {
	var cfg model.Config
	names := make([]string, 0, len(d.lastGood))
	for n := range d.lastGood {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		st := d.lastGood[n]
		if st.doc.Service != nil {
			cfg.Services = append(cfg.Services, *st.doc.Service)
		}
		if st.doc.Gateway != nil {
			cfg.Gateways = append(cfg.Gateways, *st.doc.Gateway)
		}
		cfg.Certificates = append(cfg.Certificates, st.certs...)
	}
	slices.SortFunc(cfg.Certificates, func(a, b model.Certificate) int { return cmp.Compare(a.Name, b.Name) })
	return cfg
}
