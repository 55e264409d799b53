package main

import (
	"debug/elf"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
)

// File is one regular file of an image taken from the build machine.
type File struct {
	// Path is where the image holds it (absolute).
	Path string
	// Mode is its permission bits.
	Mode int64
	// Data is its content.
	Data []byte
}

// defaultLibDirs are the directories where Debian's x86-64 dynamic loader
// looks for libraries when no ld.so.cache says otherwise (the image has
// none), comma-separated.
const defaultLibDirs = "/lib/x86_64-linux-gnu,/usr/lib/x86_64-linux-gnu"

// runtimeFiles are what the dynamically linked executable at exe (a path
// on the build machine) needs to start in an image that holds nothing
// else: its program interpreter (the dynamic loader) at the path the
// executable names, and every shared library it needs, directly or through
// other libraries (DT_NEEDED), found in dirs and kept under the first dir
// that holds it. The loader and libraries are read below root ("/" on the
// build machine; the unpacked C library of another architecture, or a
// test's tree), following symbolic links. A static executable needs none.
func runtimeFiles(root, exe string, dirs []string) ([]File, error) {
	interp, needed, err := elfDeps(exe)
	if err != nil {
		return nil, err
	}
	var out []File
	if interp != "" {
		f, err := readFile(root, interp)
		if err != nil {
			return nil, fmt.Errorf("%s: program interpreter: %w", exe, err)
		}
		out = append(out, f)
	}
	// The loader is loaded already; a library that needs it by soname
	// (libc needs ld-linux-x86-64.so.2) is given that one.
	seen := map[string]bool{path.Base(interp): true}
	queue := needed
	for len(queue) > 0 {
		lib := queue[0]
		queue = queue[1:]
		if seen[lib] {
			continue
		}
		seen[lib] = true
		p, err := findLib(root, lib, dirs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", exe, err)
		}
		f, err := readFile(root, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", exe, err)
		}
		out = append(out, f)
		_, more, err := elfDeps(filepath.Join(root, p))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", exe, err)
		}
		queue = append(queue, more...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// elfDeps reads an ELF file's program interpreter (PT_INTERP, "" when
// static) and the libraries it needs (DT_NEEDED).
func elfDeps(p string) (interp string, needed []string, err error) {
	f, err := elf.Open(p)
	if err != nil {
		return "", nil, fmt.Errorf("read ELF %s: %w", p, err)
	}
	defer func() { _ = f.Close() }() // read-only
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, prog.Filesz)
		if _, err := prog.ReadAt(b, 0); err != nil {
			return "", nil, fmt.Errorf("read the program interpreter of %s: %w", p, err)
		}
		if len(b) > 0 && b[len(b)-1] == 0 {
			b = b[:len(b)-1]
		}
		interp = string(b)
	}
	needed, err = f.ImportedLibraries()
	if err != nil {
		return "", nil, fmt.Errorf("read the shared libraries %s needs: %w", p, err)
	}
	return interp, needed, nil
}

// findLib is the path of lib in the first of dirs (below root) that holds
// it.
func findLib(root, lib string, dirs []string) (string, error) {
	if lib != path.Base(lib) {
		return "", fmt.Errorf("shared library %q: not a plain file name", lib)
	}
	for _, d := range dirs {
		p := path.Join(d, lib)
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("shared library %s: in none of %v", lib, dirs)
}

// readFile reads the file at image path p below root, with its
// permission bits.
func readFile(root, p string) (File, error) {
	full := filepath.Join(root, p)
	st, err := os.Stat(full)
	if err != nil {
		return File{}, err
	}
	if !st.Mode().IsRegular() {
		return File{}, fmt.Errorf("%s: not a regular file", full)
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return File{}, err
	}
	return File{Path: p, Mode: int64(st.Mode().Perm()), Data: data}, nil
}
