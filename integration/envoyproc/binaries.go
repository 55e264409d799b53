package envoyproc

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tlbproject/tlb/l7/bootstrap"
)

// Binary returns the path of the Envoy binary: $TLB_ENVOY, or the one
// tools/deps.sh unpacked into the lab cache ($TLB_LAB_CACHE, by default
// ~/.cache/tlb-lab) for bootstrap.EnvoyVersion.
func Binary() (string, error) {
	if p := os.Getenv("TLB_ENVOY"); p != "" {
		return p, checkExec(p)
	}
	cache := os.Getenv("TLB_LAB_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("envoyproc: no TLB_LAB_CACHE and no home directory: %w", err)
		}
		cache = filepath.Join(home, ".cache", "tlb-lab")
	}
	p := filepath.Join(cache, "envoy", bootstrap.EnvoyVersion, "envoy")
	return p, checkExec(p)
}

func checkExec(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("envoyproc: no Envoy %s binary (run tools/deps.sh, which fetches it): %w", bootstrap.EnvoyVersion, err)
	}
	if st.Mode()&0o111 == 0 {
		return fmt.Errorf("envoyproc: %s is not executable", p)
	}
	return nil
}

var l7Build struct {
	once sync.Once
	path string
	err  error
}

// L7Binary returns an l7 binary: $TLB_BIN_DIR/l7 (the lab's binaries),
// else one built once per process from this module (Go's build cache
// makes that quick) into binDir, where every test process of the run
// shares one path: a test binary exits without a hook to remove what it
// made, so a directory per process would be left behind by each.
func L7Binary() (string, error) {
	if d := os.Getenv("TLB_BIN_DIR"); d != "" {
		p := filepath.Join(d, "l7")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	l7Build.once.Do(func() {
		l7Build.path, l7Build.err = buildL7()
	})
	return l7Build.path, l7Build.err
}

func buildL7() (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	dir, err := binDir()
	if err != nil {
		return "", err
	}
	// Built under a name of its own, then renamed over the shared one:
	// processes built side by side never run a half-written file, and one
	// already running keeps the file it started.
	tmp, err := os.CreateTemp(dir, "l7-*.tmp")
	if err != nil {
		return "", err
	}
	_ = tmp.Close()
	defer func() { _ = os.Remove(tmp.Name()) }() // gone already once renamed
	cmd := exec.Command("go", "build", "-o", tmp.Name(), "./l7/cmd/l7")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("envoyproc: go build l7: %w\n%s", err, out)
	}
	p := filepath.Join(dir, "l7")
	if err := os.Rename(tmp.Name(), p); err != nil {
		return "", err
	}
	return p, nil
}

// binDir is the one directory, under the system's temporary directory,
// where the tests' binaries live: readable and runnable by any user (the
// manifests' users are not root).
func binDir() (string, error) {
	dir := filepath.Join(os.TempDir(), "tlb-test-bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}

// ModuleRoot is the directory of this module's go.mod, found from the
// working directory upwards (tests run in their package's directory, in
// the lab VM too, where the host's tree is shared at the same path).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/tlbproject/tlb\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("envoyproc: not inside the tlb module")
		}
		dir = parent
	}
}

// readableCopy returns a copy of the binary at src that any user can run,
// made once per process in binDir under a name with its content's hash:
// the lab cache is under root's home, which the manifest's user cannot
// enter. Runs side by side share a copy instead of leaving one each.
func readableCopy(src string) (string, error) {
	copies.Lock()
	defer copies.Unlock()
	if p, ok := copies.m[src]; ok {
		return p, nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	dir, err := binDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	p := filepath.Join(dir, fmt.Sprintf("%s-%x", filepath.Base(src), sum[:8]))
	if _, err := os.Stat(p); err != nil {
		tmp, err := os.CreateTemp(dir, filepath.Base(src)+"-*.tmp")
		if err != nil {
			return "", err
		}
		defer func() { _ = os.Remove(tmp.Name()) }() // gone already once renamed
		_, werr := tmp.Write(b)
		if cerr := tmp.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", werr
		}
		if err := os.Chmod(tmp.Name(), 0o755); err != nil {
			return "", err
		}
		if err := os.Rename(tmp.Name(), p); err != nil {
			return "", err
		}
	}
	if copies.m == nil {
		copies.m = map[string]string{}
	}
	copies.m[src] = p
	return p, nil
}

var copies struct {
	sync.Mutex
	m map[string]string
}
