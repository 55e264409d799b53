package lab

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ArtifactMarker starts every artifact line a test inside the VM prints.
// The VM shares the host's root read-only, so a file a test makes there
// (a screenshot) leaves it only through the console output: as lines
//
//	TLB-ARTIFACT TEST NAME I/N SHA256 BASE64
//
// one per chunk of at most ArtifactChunk bytes, which Artifacts puts back
// together on the host side into DIR/TEST/NAME. Short lines keep the
// serial console and the line scanner of Run within their limits.
const ArtifactMarker = "TLB-ARTIFACT "

// ArtifactChunk is how many bytes of a file one artifact line carries.
const ArtifactChunk = 3 << 10

// emptyChunk stands for the data of an empty file, which base64 would
// leave as an empty field.
const emptyChunk = "-"

// ArtifactLines returns the lines that carry data as artifact name of
// test (t.Name(); subtests keep their slashes as directories).
func ArtifactLines(test, name string, data []byte) ([]string, error) {
	if err := checkArtifactPath(test, name); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	n := max(1, (len(data)+ArtifactChunk-1)/ArtifactChunk)
	lines := make([]string, 0, n)
	for i := range n {
		part := data[min(i*ArtifactChunk, len(data)):min((i+1)*ArtifactChunk, len(data))]
		enc := base64.StdEncoding.EncodeToString(part)
		if enc == "" {
			enc = emptyChunk
		}
		lines = append(lines, fmt.Sprintf("%s%s %s %d/%d %s %s", ArtifactMarker, test, name, i+1, n,
			hex.EncodeToString(sum[:]), enc))
	}
	return lines, nil
}

// checkArtifactPath refuses a test or file name that would leave the
// output directory or break the line's fields.
func checkArtifactPath(test, name string) error {
	if name == "" || strings.ContainsAny(name, "/\\ \t\n") || name == "." || name == ".." {
		return fmt.Errorf("artifact name %q: want a plain file name", name)
	}
	if test == "" || strings.ContainsAny(test, "\\ \t\n") {
		return fmt.Errorf("artifact test %q: want a test name", test)
	}
	for _, el := range strings.Split(test, "/") {
		if el == "" || el == "." || el == ".." {
			return fmt.Errorf("artifact test %q: element %q", test, el)
		}
	}
	return nil
}

// Artifacts writes the artifacts whose lines it is given into Dir, as
// DIR/TEST/NAME, once every chunk of a file has arrived and its SHA-256
// matches.
type Artifacts struct {
	Dir     string
	pending map[string]*partialArtifact
}

type partialArtifact struct {
	sum   string
	parts [][]byte
	have  int
}

// Line takes one line of the VM's output. It returns whether the line
// was an artifact line (to keep it out of the log), and the path of the
// file when the line completed one.
func (a *Artifacts) Line(line string) (bool, string, error) {
	i := strings.Index(line, ArtifactMarker)
	if i < 0 {
		return false, "", nil
	}
	f := strings.Fields(line[i+len(ArtifactMarker):])
	if len(f) != 5 {
		return true, "", fmt.Errorf("artifact line: %d fields, want TEST NAME I/N SHA256 BASE64", len(f))
	}
	test, name, seq, sum, b64 := f[0], f[1], f[2], f[3], f[4]
	if err := checkArtifactPath(test, name); err != nil {
		return true, "", err
	}
	is, ns, ok := strings.Cut(seq, "/")
	idx, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || n > 1<<20 || idx < 1 || idx > n {
		return true, "", fmt.Errorf("artifact %s/%s: part %q: want I/N", test, name, seq)
	}
	if b64 == emptyChunk {
		b64 = ""
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return true, "", fmt.Errorf("artifact %s/%s part %d: %w", test, name, idx, err)
	}
	key := test + "/" + name
	if a.pending == nil {
		a.pending = map[string]*partialArtifact{}
	}
	p := a.pending[key]
	if p == nil || p.sum != sum || len(p.parts) != n {
		// A new file, or the same name written again: start over.
		p = &partialArtifact{sum: sum, parts: make([][]byte, n)}
		a.pending[key] = p
	}
	if p.parts[idx-1] == nil {
		p.parts[idx-1] = data
		p.have++
	}
	if p.have < n {
		return true, "", nil
	}
	delete(a.pending, key)
	var whole []byte
	for _, part := range p.parts {
		whole = append(whole, part...)
	}
	if got := sha256.Sum256(whole); hex.EncodeToString(got[:]) != sum {
		return true, "", fmt.Errorf("artifact %s/%s: SHA-256 %x, the lines say %s", test, name, got, sum)
	}
	path := filepath.Join(a.Dir, filepath.FromSlash(test), name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return true, "", fmt.Errorf("artifact %s/%s: %w", test, name, err)
	}
	if err := os.WriteFile(path, whole, 0o644); err != nil {
		return true, "", fmt.Errorf("artifact %s/%s: %w", test, name, err)
	}
	return true, path, nil
}

// Relay writes line to out unless it is an artifact line, which it takes
// instead, writing a one-line note to out when it completes a file or is
// refused.
func (a *Artifacts) Relay(out io.Writer, line string) {
	switch ok, path, err := a.Line(line); {
	case err != nil:
		_, _ = fmt.Fprintf(out, "lab: %v\n", err)
	case path != "":
		_, _ = fmt.Fprintf(out, "lab: artifact saved to %s\n", path)
	case !ok:
		_, _ = fmt.Fprintln(out, line)
	}
}

// Incomplete names the artifacts some of whose lines never arrived.
func (a *Artifacts) Incomplete() []string {
	var out []string
	for k, p := range a.pending {
		out = append(out, fmt.Sprintf("%s (%d of %d parts)", k, p.have, len(p.parts)))
	}
	slices.Sort(out)
	return out
}
