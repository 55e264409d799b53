package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oversized returns a valid file padded with comments past MaxFileSize:
// parsed, it would be accepted, so a rejection proves the cap.
func oversized() string {
	var b strings.Builder
	b.WriteString("vips: [203.0.113.10]\n")
	line := "# " + strings.Repeat("x", 1021) + "\n"
	for b.Len() <= MaxFileSize {
		b.WriteString(line)
	}
	return b.String()
}

func TestLoadRefusesFileOverSizeCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netd.yaml")
	if err := os.WriteFile(path, []byte(oversized()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "1 MiB size cap") {
		t.Fatalf("Load err = %v; want an error naming %s and the 1 MiB cap", err, path)
	}
}

func TestParseRefusesDataOverSizeCap(t *testing.T) {
	_, err := Parse([]byte(oversized()))
	if err == nil || !strings.Contains(err.Error(), "1 MiB size cap") {
		t.Fatalf("Parse err = %v; want an error naming the 1 MiB cap", err)
	}
}

func TestParseAcceptsFileAtTheCap(t *testing.T) {
	head := "vips: [203.0.113.10]\n"
	data := head + "#" + strings.Repeat("x", MaxFileSize-len(head)-2) + "\n"
	if len(data) != MaxFileSize {
		t.Fatalf("test data is %d bytes; want %d", len(data), MaxFileSize)
	}
	if _, err := Parse([]byte(data)); err != nil {
		t.Errorf("a file of exactly MaxFileSize bytes rejected: %v", err)
	}
}
