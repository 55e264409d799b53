package edge

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/render"
	"github.com/tlbproject/tlb/l7/translate"
)

// TestRenderedBootstrapsValidate: "l7 render --format bootstrap" of the
// example configuration (l7/testdata/config), every group, is taken by
// "envoy --mode validate" as it is printed, with the certificate keys
// where it names them (translate.KeyPath, under a temporary directory
// here). The translator's own tests render many more configs and have
// Envoy check each (l7/translate, envoy_test.go).
func TestRenderedBootstrapsValidate(t *testing.T) {
	root, err := envoyproc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := envoyproc.Binary()
	if err != nil {
		t.Fatal(err)
	}
	cfgDir := filepath.Join(root, "l7", "testdata", "config")
	cfg, errs, err := dsl.NewDir(cfgDir, time.Now).Load()
	if err != nil || len(errs) > 0 {
		t.Fatalf("example config: %v %v", err, errs)
	}
	keys := t.TempDir()
	for _, c := range cfg.Certificates {
		p := filepath.Join(keys, c.Name, "tls.key")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, c.Key.Reveal(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, group := range []string{"edge", "internal"} {
		t.Run(group, func(t *testing.T) {
			out, errs, err := render.Render(dsl.NewDir(cfgDir, time.Now), group, translate.Gateway, render.FormatBootstrap, model.Options{})
			if err != nil || len(errs) > 0 {
				t.Fatalf("render: %v %v", err, errs)
			}
			const mounted = "/etc/envoy/certs/" // where the gateway mounts the Secrets
			if !strings.HasPrefix(translate.KeyPath("s"), mounted) || (group == "edge" && !strings.Contains(string(out), mounted)) {
				t.Fatalf("the bootstrap names no key under %s (KeyPath %s)", mounted, translate.KeyPath("s"))
			}
			y := strings.ReplaceAll(string(out), mounted, keys+"/")
			p := filepath.Join(t.TempDir(), "bootstrap.yaml")
			if err := os.WriteFile(p, []byte(y), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bin, "--mode", "validate", "-c", p, "--disable-hot-restart", "-l", "critical").CombinedOutput(); err != nil {
				t.Fatalf("envoy --mode validate refuses what l7 render printed for %s: %v\n%s", group, err, out)
			}
		})
	}
}
