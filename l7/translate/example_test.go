package translate_test

import (
	"fmt"
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

// loadExample resolves the big example the docs walk through
// (l7/testdata/config): every feature at once, for the tests that need a
// realistic whole (determinism, the cache, isolation between groups).
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

// TestExample: the big example (l7/testdata/config) has the groups edge
// and internal, its listeners are attached as below, and every group's set
// for every kind of client passes validation, as does each group's static
// bootstrap. What each feature translates to is in the feature goldens
// (TestFeatureGolden).
func TestExample(t *testing.T) {
	r := loadExample(t)
	groups := translate.Groups(r)
	if !slices.Equal(groups, []string{"edge", "internal"}) {
		t.Fatalf("groups = %v", groups)
	}
	for _, g := range groups {
		for _, kind := range []translate.Kind{translate.Gateway, translate.GRPC} {
			set := translate.Group(r, g, kind)
			if err := validate.Set(set); err != nil {
				t.Errorf("%s/%s: translated set fails validation: %v", g, kind, err)
			}
			if kind != translate.Gateway {
				continue
			}
			b, err := translate.StaticBootstrap(set)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate.Message(b); err != nil {
				t.Errorf("%s: static bootstrap fails validation: %v", g, err)
			}
		}
	}
	var ls strings.Builder
	for _, l := range r.Listeners {
		fmt.Fprintf(&ls, "%s %s %s %s:%d redirectHTTPS=%v services=%v\n", l.Group, l.Name, l.Protocol, l.VIP, l.Port, l.RedirectHTTPS, l.Services)
	}
	const want = `edge http-203.0.113.10-80 HTTP 203.0.113.10:80 redirectHTTPS=true services=[]
edge http-203.0.113.12-80 HTTP 203.0.113.12:80 redirectHTTPS=false services=[payments reports todolist]
edge https-203.0.113.10-443 HTTPS 203.0.113.10:443 redirectHTTPS=false services=[shop]
edge https-203.0.113.13-443 HTTPS 203.0.113.13:443 redirectHTTPS=false services=[]
edge tcp-203.0.113.11-443 TCP 203.0.113.11:443 redirectHTTPS=false services=[]
internal http-198.51.100.1-8888 HTTP 198.51.100.1:8888 redirectHTTPS=false services=[greeter]
`
	if ls.String() != want {
		t.Errorf("listeners:\n%s\nwant:\n%s", ls.String(), want)
	}
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
