package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"path"
	"sort"
	"time"
)

// BinDir is where the image holds the TLB binaries; the manifests in deploy/
// run them from here.
const BinDir = "/usr/local/bin"

// Binary is one executable the image ships in BinDir.
type Binary struct {
	// Name is the file name in BinDir, e.g. "tlb".
	Name string
	// Data is the executable's content.
	Data []byte
}

// entry is one file or directory of the image's root file system.
type entry struct {
	path string // absolute, cleaned
	dir  bool
	mode int64
	data []byte
	// xattrs are extended attributes by name (e.g. security.capability),
	// written as PAX records.
	xattrs map[string]string
}

// rootFS lists every entry of the image's single layer: the binaries in
// BinDir (0755), /etc/passwd and /etc/group (0644) and the directories that
// hold them (0755), sorted by path so parents come before children. It
// rejects names that are empty, not a single path element, or repeated.
func rootFS(bins []Binary) ([]entry, error) {
	files := map[string]entry{
		"/etc/passwd": {path: "/etc/passwd", mode: 0o644, data: []byte(passwd)},
		"/etc/group":  {path: "/etc/group", mode: 0o644, data: []byte(group)},
	}
	for i, b := range bins {
		if b.Name == "" || b.Name != path.Base(b.Name) || b.Name == "." || b.Name == ".." {
			return nil, fmt.Errorf("binary %d: name %q is not a plain file name", i, b.Name)
		}
		if len(b.Data) == 0 {
			return nil, fmt.Errorf("binary %s: empty file", b.Name)
		}
		p := path.Join(BinDir, b.Name)
		if _, dup := files[p]; dup {
			return nil, fmt.Errorf("binary %s: listed twice", b.Name)
		}
		files[p] = entry{path: p, mode: 0o755, data: b.Data}
	}
	return tree(files), nil
}

// tree lists files and every directory that holds them (0755), sorted by
// path so parents come before children.
func tree(files map[string]entry) []entry {
	all := make(map[string]entry, len(files)+4)
	for p, e := range files {
		all[p] = e
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			all[d] = entry{path: d, dir: true, mode: 0o755}
		}
	}
	out := make([]entry, 0, len(all))
	for _, e := range all {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// layerTar writes entries as an uncompressed tar stream, the content of an
// image layer. Every entry is owned by root (0:0) and carries mtime, so the
// bytes depend only on the entries and mtime: two builds of one commit give
// one layer digest.
func layerTar(entries []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.path[1:], // relative, as docker and containerd write layers
			Mode:    e.mode,
			ModTime: mtime.UTC().Truncate(time.Second),
			Uid:     0,
			Gid:     0,
			Uname:   "root",
			Gname:   "root",
			Format:  tar.FormatPAX,
		}
		for name, v := range e.xattrs {
			if h.PAXRecords == nil {
				h.PAXRecords = map[string]string{}
			}
			// archive/tar writes PAX records sorted by key.
			h.PAXRecords[paxXattrPrefix+name] = v
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
			h.Name += "/"
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer: write header of %s: %w", e.path, err)
		}
		if !e.dir {
			if _, err := tw.Write(e.data); err != nil {
				return nil, fmt.Errorf("layer: write %s: %w", e.path, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: close tar: %w", err)
	}
	return buf.Bytes(), nil
}
