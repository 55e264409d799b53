package translate_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func loadExample(t *testing.T) model.Resolved {
	t.Helper()
	cfg, errs, _ := dsl.NewDir("../testdata/config", time.Now).Load()
	if len(errs) > 0 {
		t.Fatalf("example config has errors: %v", errs)
	}
	r := resolve(t, cfg, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("example config has problems: %v", r.Problems)
	}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test ./l7/translate -update and review the diff.\ngot:\n%s", path, got)
	}
}

func TestGolden(t *testing.T) {
	r := loadExample(t)
	groups := translate.Groups(r)
	if !slices.Equal(groups, []string{"edge", "internal"}) {
		t.Fatalf("groups = %v", groups)
	}
	for _, g := range groups {
		for _, kind := range []translate.Kind{translate.Gateway, translate.GRPC} {
			t.Run(g+"/"+string(kind), func(t *testing.T) {
				set := translate.Group(r, g, kind)
				if err := validate.Set(set); err != nil {
					t.Fatalf("translated set fails validation: %v", err)
				}
				y, err := translate.ResourcesYAML(set)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, fmt.Sprintf("%s.%s.yaml", g, kind), y)
				if kind != translate.Gateway {
					return
				}
				b, err := translate.StaticBootstrap(set)
				if err != nil {
					t.Fatal(err)
				}
				if err := validate.Message(b); err != nil {
					t.Fatalf("static bootstrap fails validation: %v", err)
				}
				by, err := translate.YAML(b)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, g+".bootstrap.yaml", by)
			})
		}
	}
	var ls strings.Builder
	for _, l := range r.Listeners {
		fmt.Fprintf(&ls, "%s %s %s %s:%d redirectHTTPS=%v services=%v\n", l.Group, l.Name, l.Protocol, l.VIP, l.Port, l.RedirectHTTPS, l.Services)
	}
	golden(t, "listeners.txt", []byte(ls.String()))
}

// TestDeterministic: input order does not change the output.
func TestDeterministic(t *testing.T) {
	r := loadExample(t)
	cfg := r.Config
	slices.Reverse(cfg.Services)
	slices.Reverse(cfg.Gateways)
	slices.Reverse(cfg.Certificates)
	r2 := resolve(t, cfg, model.Options{})
	for _, g := range translate.Groups(r) {
		a, b := translate.Group(r, g, translate.Gateway), translate.Group(r2, g, translate.Gateway)
		for typ := range a {
			if len(a[typ]) != len(b[typ]) {
				t.Fatalf("%s %s: %d vs %d resources", g, typ, len(a[typ]), len(b[typ]))
			}
			for i := range a[typ] {
				if !proto.Equal(a[typ][i], b[typ][i]) {
					t.Errorf("%s %s[%d] differs with reordered input", g, typ, i)
				}
			}
		}
	}
}

// TestGRPCListenersCarryAPIListener: proxyless clients get api_listeners,
// gateways never do.
func TestGRPCListenersCarryAPIListener(t *testing.T) {
	r := loadExample(t)
	for _, l := range translate.GRPCListeners(r, "internal") {
		if l.GetApiListener() == nil || l.GetAddress() != nil {
			t.Errorf("grpc listener %s: want api_listener and no address", l.GetName())
		}
	}
	for _, l := range translate.Listeners(r, "edge") {
		if l.GetApiListener() != nil {
			t.Errorf("gateway listener %s carries an api_listener", l.GetName())
		}
	}
}
