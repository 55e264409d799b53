package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for name, tc := range map[string]struct {
		in   Info
		want string
	}{
		"tagged": {Info{Binary: "tlb", Version: "v0.2.0", Commit: "1a2b3c4d5e6f7a8b", Time: "2026-12-02T10:00:00Z", Go: "go1.26.8", Platform: "linux/amd64"},
			"tlb v0.2.0 commit 1a2b3c4d5e6f (2026-12-02T10:00:00Z) go1.26.8 linux/amd64"},
		"dirty": {Info{Binary: "l7", Version: "(devel)", Commit: "abc", Modified: true, Go: "go1.26.8", Platform: "linux/arm64"},
			"l7 (devel) commit abc-dirty go1.26.8 linux/arm64"},
		"no vcs": {Info{Binary: "netd", Version: "(devel)", Go: "go1.26.8", Platform: "linux/amd64"}, "netd (devel) go1.26.8 linux/amd64"},
	} {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

// TestEveryBinaryPrintsItsBuild builds each binary from this checkout and
// runs it with --version: the line names the binary, the commit of HEAD
// and the platform.
func TestEveryBinaryPrintsItsBuild(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	dir := t.TempDir()
	// One build of the four, with the flags and environment of make image
	// (tools/image/build.sh), so the two share Go's build cache; the
	// commit is asked for since these machines set GOFLAGS=-buildvcs=false.
	bins := []string{"tlb", "netd", "ipam", "l7"}
	args := []string{"build", "-buildvcs=true", "-trimpath", "-ldflags=-s -w", "-o", dir + "/"}
	for _, b := range bins {
		args = append(args, "./"+b+"/cmd/"+b)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, o)
	}
	for _, b := range bins {
		out := filepath.Join(dir, b)
		got, err := exec.Command(out, "--version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s --version: %v\n%s", b, err, got)
		}
		line := strings.TrimSpace(string(got))
		re := regexp.MustCompile(`^` + b + ` \S+ commit ` + string(head[:12]) + `(-dirty)? \(\S+\) go\S+ linux/`)
		if !re.MatchString(line) {
			t.Errorf("%s --version = %q, want the binary, HEAD's commit %s and the platform", b, line, head[:12])
		}
	}
}
