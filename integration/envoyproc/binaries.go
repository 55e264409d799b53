package envoyproc

import (
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
// else one built once per process from this module into a temporary
// directory (Go's build cache makes that quick).
func L7Binary() (string, error) {
	if d := os.Getenv("TLB_BIN_DIR"); d != "" {
		p := filepath.Join(d, "l7")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	l7Build.once.Do(func() {
		root, err := ModuleRoot()
		if err != nil {
			l7Build.err = err
			return
		}
		dir, err := os.MkdirTemp("", "tlb-l7-bin-")
		if err != nil {
			l7Build.err = err
			return
		}
		p := filepath.Join(dir, "l7")
		cmd := exec.Command("go", "build", "-o", p, "./l7/cmd/l7")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			l7Build.err = fmt.Errorf("envoyproc: go build l7: %w\n%s", err, out)
			return
		}
		l7Build.path = p
	})
	return l7Build.path, l7Build.err
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
// made once per process under the system's temporary directory: the
// lab cache is under root's home, which the manifest's user cannot enter.
func readableCopy(src string) (string, error) {
	copies.Lock()
	defer copies.Unlock()
	if p, ok := copies.m[src]; ok {
		return p, nil
	}
	dir, err := os.MkdirTemp("", "tlb-bin-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(p, b, 0o755); err != nil {
		return "", err
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
