package config

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/tlb/model"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// render is the golden form of a Parse result: the parsed config as JSON,
// or the error, one line per problem.
func render(cfg *Config, err error) string {
	if err != nil {
		return "error:\n" + err.Error() + "\n"
	}
	type rs struct {
		Address string
		Weight  int
	}
	type svc struct {
		Key         string
		Scheduler   model.Scheduler
		Flags       []model.Flag
		RealServers []rs
	}
	out := struct {
		Director Director
		Services []svc
		L7       []model.L7Service `json:",omitempty"`
		BGP      *bgp.Config       `json:",omitempty"`
		Health   string            `json:",omitempty"`
	}{Director: cfg.Director, BGP: cfg.BGP, L7: cfg.Desired.Sorted().L7}
	if cfg.Health != nil {
		out.Health = fmt.Sprintf("%+v", *cfg.Health)
	}
	for _, s := range cfg.Desired.Sorted().Services {
		v := svc{Key: s.Key().String(), Scheduler: s.Scheduler, Flags: s.Flags}
		for _, r := range s.RealServers {
			v.RealServers = append(v.RealServers, rs{r.Addr.String(), r.Weight})
		}
		out.Services = append(out.Services, v)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return string(b) + "\n"
}

func TestParseGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := render(Parse(f, data))
			golden := strings.TrimSuffix(f, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("Parse(%s) =\n%s\nwant\n%s", f, got, want)
			}
		})
	}
}

func TestParseErrorsNameFileAndField(t *testing.T) {
	tests := map[string]struct {
		yaml string
		want []string
	}{
		"weight out of range": {
			yaml: "services:\n- vip: 203.0.113.10\n  port: 80\n  realServers:\n  - {address: 198.18.2.2, weight: -1}\n",
			want: []string{"config my.yaml: services[0].realServers[0].weight (service 203.0.113.10:80/tcp): must be 0..65535"},
		},
		"unknown nested field": {
			yaml: "services:\n- vip: 203.0.113.10\n  port: 80\n  realServers:\n  - {address: 198.18.2.2, weigth: 1}\n",
			want: []string{`config my.yaml: services[0].realServers[0]: unknown field "weigth"`},
		},
		"unknown top-level field": {
			yaml: "servises: []\n",
			want: []string{`config my.yaml: top level: unknown field "servises"`},
		},
		"services missing": {
			yaml: "director: {}\n",
			want: []string{"config my.yaml: services: required"},
		},
		"bad vip": {
			yaml: "services:\n- {vip: 203.0.113, port: 80, realServers: []}\n",
			want: []string{`config my.yaml: services[0].vip: "203.0.113" is not an IP address`},
		},
		"bad scheduler": {
			yaml: "services:\n- {vip: 203.0.113.1, port: 80, scheduler: magic, realServers: []}\n",
			want: []string{`config my.yaml: services[0].scheduler (service 203.0.113.1:80/tcp): "magic" is not one of`},
		},
		"bgp field named": {
			yaml: "director: {vipRanges: [203.0.113.0/24]}\nservices: []\nbgp: {localASN: 64512, routerID: 198.18.1.2, allowedPrefixes: [203.0.113.0/24], peers: [{address: 198.18.1.1, asn: 64500, holdTimeSeconds: 2}]}\n",
			want: []string{"config my.yaml: bgp: peers[0].holdTimeSeconds: 2 is below"},
		},
		"bgp unknown field": {
			yaml: "director: {vipRanges: [203.0.113.0/24]}\nservices: []\nbgp: {localASN: 64512, routerID: 198.18.1.2, allowedPrefixes: [203.0.113.0/24], peers: [], asn: 1}\n",
			want: []string{"config my.yaml: bgp: ", `unknown field "asn"`},
		},
		"bgp needs vipRanges": {
			yaml: "services: []\nbgp: {localASN: 64512, routerID: 198.18.1.2, allowedPrefixes: [203.0.113.0/24], peers: [{address: 198.18.1.1, asn: 64500}]}\n",
			want: []string{"config my.yaml: director.vipRanges: required with a bgp section"},
		},
		"vipRange outside allowedPrefixes": {
			yaml: "director: {vipRanges: [203.0.113.0/24, 198.51.100.0/24]}\nservices: []\nbgp: {localASN: 64512, routerID: 198.18.1.2, allowedPrefixes: [203.0.113.0/25, 203.0.113.0/24], peers: [{address: 198.18.1.1, asn: 64500}]}\n",
			want: []string{"config my.yaml: director.vipRanges[1]: 198.51.100.0/24 is outside bgp.allowedPrefixes"},
		},
		"health field named": {
			yaml: "services: []\nhealth: {port: 8081, fall: 0, rise: 500}\n",
			want: []string{"config my.yaml: health: rise: 500 is outside 1..100"},
		},
		"health bad duration": {
			yaml: "services: []\nhealth: {port: 8081, interval: soon}\n",
			want: []string{`config my.yaml: health: interval: "soon" is not a duration`},
		},
		"bad drain period": {
			yaml: "director: {drainPeriod: 1h}\nservices: []\n",
			want: []string{"config my.yaml: director.drainPeriod: 1h0m0s is outside 0s..10m0s"},
		},
		"two problems both reported": {
			yaml: "services:\n- {vip: 203.0.113.1, port: 70000, realServers: [{address: x}]}\n",
			want: []string{"services[0].port: 70000 is not 1..65535", `services[0].realServers[0].address: "x" is not an IP address`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse("my.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", cfg)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q; want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Parse("d.yaml", []byte("services:\n- {vip: 203.0.113.10, port: 80, realServers: [{address: 198.18.2.2}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Director.MetricsAddress != DefaultMetricsAddress || cfg.Director.RuntimeDir != DefaultRuntimeDir || cfg.Director.ResyncInterval != DefaultResync {
		t.Errorf("director defaults = %+v", cfg.Director)
	}
	s := cfg.Desired.Services[0].WithDefaults()
	if s.Protocol != model.TCP || s.Scheduler != model.Maglev || len(s.Flags) != 2 || s.RealServers[0].Weight != 1 {
		t.Errorf("service defaults = %+v", s)
	}
}

func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("services:\n- {vip: '::1', port: 1, realServers: [{address: '::2', weight: 65535}]}\n"))
	f.Add([]byte("services: {a: b}\n"))
	f.Add([]byte("[1, 2]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config fuzz.yaml: ") {
				t.Errorf("error does not name the file: %q", err)
			}
			return
		}
		if verr := cfg.Desired.Validate(); verr != nil {
			t.Errorf("Parse accepted a model that does not validate: %v", verr)
		}
	})
}

// TestParseSettings: with services from the API server the file must not
// list services, and everything else is parsed as usual.
func TestParseSettings(t *testing.T) {
	settings := "director:\n  drainPeriod: 2s\nbgp:\n  localASN: 64512\n  routerID: 198.18.1.2\n  allowedPrefixes: [203.0.113.0/24]\n" +
		"  peers: [{address: 198.18.1.1, asn: 64500}]\n"
	cfg, err := ParseSettings("d.yaml", []byte(settings))
	if err != nil {
		t.Fatalf("settings without services: %v", err)
	}
	if len(cfg.Desired.Services) != 0 || cfg.Director.DrainPeriod != 2*time.Second || cfg.BGP == nil || len(cfg.Director.VIPRanges) != 0 {
		t.Errorf("parsed %+v", cfg)
	}
	for name, tc := range map[string]struct{ data, want string }{
		"services listed": {settings + "services: []\n", "config d.yaml: services: not allowed when services come from the Kubernetes API server"},
		"unknown field":   {settings + "servics: []\n", "servics"},
		"bad director":    {"director:\n  drainPeriod: soon\n", "director.drainPeriod"},
		"vip ranges":      {"director:\n  vipRanges: [203.0.113.0/24]\n", "director.vipRanges: not allowed when services come from the Kubernetes API server"},
	} {
		_, err := ParseSettings("d.yaml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
	if _, err := Parse("d.yaml", []byte(settings+"services: []\n")); err == nil || !strings.Contains(err.Error(), "director.vipRanges: required with a bgp section") {
		t.Errorf("Parse (file mode) of bgp without vipRanges: %v", err)
	}
}
