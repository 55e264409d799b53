package lab

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArtifactLinesRoundTrip: a file printed as artifact lines, with the
// prefix t.Logf puts before them, comes back byte for byte under
// DIR/TEST/NAME, whatever order the lines arrive in and with other output
// between them; every line stays short.
func TestArtifactLinesRoundTrip(t *testing.T) {
	data := make([]byte, 5*ArtifactChunk+17)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	lines, err := ArtifactLines("TestConsole/api_down", "console.png", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6", len(lines))
	}
	for _, l := range lines {
		if len(l) > 4400 {
			t.Errorf("line of %d bytes", len(l))
		}
	}
	a := &Artifacts{Dir: t.TempDir()}
	// Last line first, each as the test log shows it, other output between.
	order := []int{5, 0, 1, 2, 3, 4}
	var saved string
	for k, i := range order {
		if ok, _, _ := a.Line("=== RUN   TestConsole"); ok {
			t.Error("an ordinary line taken for an artifact line")
		}
		ok, path, err := a.Line("    console_lab_test.go:263: " + lines[i])
		if !ok || err != nil {
			t.Fatalf("line %d: ok %v err %v", i, ok, err)
		}
		if path != "" && k != len(order)-1 {
			t.Fatalf("file saved at line %d of %d", k+1, len(order))
		}
		saved = path
	}
	if want := filepath.Join(a.Dir, "TestConsole", "api_down", "console.png"); saved != want {
		t.Fatalf("saved %q, want %q", saved, want)
	}
	got, err := os.ReadFile(saved)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("saved file differs from the original (%d vs %d bytes, %v)", len(got), len(data), err)
	}
	if inc := a.Incomplete(); len(inc) != 0 {
		t.Errorf("incomplete after the whole file: %v", inc)
	}

	// An empty file is one line.
	lines, err = ArtifactLines("TestX", "empty.txt", nil)
	if err != nil || len(lines) != 1 {
		t.Fatalf("empty file: %v %v", lines, err)
	}
	if _, path, err := a.Line(lines[0]); err != nil || path == "" {
		t.Fatalf("empty file: %q %v", path, err)
	}
}

func TestArtifactLinesRefused(t *testing.T) {
	for name, tc := range map[string]struct{ test, file string }{
		"file with a slash":  {"TestX", "../x.png"},
		"file dot dot":       {"TestX", ".."},
		"test dot dot":       {"TestX/../..", "x.png"},
		"test with a space":  {"Test X", "x.png"},
		"empty file name":    {"TestX", ""},
		"absolute test name": {"/TestX", "x.png"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ArtifactLines(tc.test, tc.file, []byte("x")); err == nil {
				t.Errorf("ArtifactLines(%q, %q) accepted", tc.test, tc.file)
			}
		})
	}
	lines, err := ArtifactLines("TestX", "x.bin", bytes.Repeat([]byte{1}, 2*ArtifactChunk))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a := &Artifacts{Dir: dir}
	// A corrupted chunk: the checksum refuses the file.
	bad := strings.Replace(lines[1], "AQEB", "AgEB", 1)
	if _, _, err := a.Line(lines[0]); err != nil {
		t.Fatal(err)
	}
	if _, path, err := a.Line(bad); err == nil || !strings.Contains(err.Error(), "SHA-256") || path != "" {
		t.Errorf("corrupted chunk: path %q err %v", path, err)
	}
	// A path escaping the directory in a line is refused, nothing written.
	evil := strings.Replace(lines[0], "TestX", "TestX/../../etc", 1)
	if _, _, err := a.Line(evil); err == nil {
		t.Error("a line with .. in the test name was accepted")
	}
	// Half a file is reported incomplete.
	if _, _, err := a.Line(lines[0]); err != nil {
		t.Fatal(err)
	}
	if inc := a.Incomplete(); len(inc) != 1 || !strings.Contains(inc[0], "TestX/x.bin (1 of 2 parts)") {
		t.Errorf("incomplete %v", inc)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files written: %v", entries)
	}
}

// TestArtifactsRelay: what the host prints of the VM's output: ordinary
// lines unchanged, no artifact line, one note per file saved.
func TestArtifactsRelay(t *testing.T) {
	lines, err := ArtifactLines("TestConsoleInHeadlessChromium", "console.png", bytes.Repeat([]byte("png"), ArtifactChunk))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a := &Artifacts{Dir: dir}
	var out bytes.Buffer
	a.Relay(&out, "=== RUN   TestConsoleInHeadlessChromium")
	for _, l := range lines {
		a.Relay(&out, "    console_lab_test.go:268: "+l)
	}
	a.Relay(&out, "--- PASS: TestConsoleInHeadlessChromium (80.00s)")
	want := "=== RUN   TestConsoleInHeadlessChromium\n" +
		"lab: artifact saved to " + filepath.Join(dir, "TestConsoleInHeadlessChromium", "console.png") + "\n" +
		"--- PASS: TestConsoleInHeadlessChromium (80.00s)\n"
	if out.String() != want {
		t.Errorf("relayed\n%s\nwant\n%s", out.String(), want)
	}
}
