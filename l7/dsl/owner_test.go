package dsl_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// groupGateway is a gateway "ga" of a group with certificate "acert" from
// certs/<group>.crt and .key; extra is appended to its listeners.
func groupGateway(group, vip, extra string) string {
	return fmt.Sprintf(`kind: gateway/gateway/v1
name: ga
group: %s
listeners:
  - name: secure
    vip: %s
    port: 443
    protocol: HTTPS
    certificates:
      - {name: acert, sni: [%s.example.com], certFile: certs/%s.crt, keyFile: certs/%s.key}
%s`, group, vip, group, group, group, extra)
}

func writeFile(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAnotherGroupsKeyNeverServed (issue 22, finding 1): group bravo's
// gateway takes the name of alpha's ("ga", so the same certificate name
// "ga.acert") and is rejected for another reason (two listeners on one
// VIP:port). Alpha's gateway must be served alpha's key, never bravo's,
// whatever the order of the files. On main the certificates were
// de-duplicated by name before any gateway was accepted, so bravo's file
// (sorting first) gave alpha's Envoy bravo's key.
func TestAnotherGroupsKeyNeverServed(t *testing.T) {
	for _, files := range [][2]string{{"a-bravo.yaml", "b-alpha.yaml"}, {"b-bravo.yaml", "a-alpha.yaml"}} {
		t.Run(files[0], func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "certs"), 0o700); err != nil {
				t.Fatal(err)
			}
			writePair(t, filepath.Join(dir, "certs"), "alpha", certNow.Add(-time.Hour), certNow.Add(time.Hour))
			writePair(t, filepath.Join(dir, "certs"), "bravo", certNow.Add(-time.Hour), certNow.Add(time.Hour))
			writeFile(t, dir, files[0], groupGateway("bravo", "203.0.113.20",
				"  - {name: again, vip: 203.0.113.20, port: 443, protocol: HTTP}\n"))
			writeFile(t, dir, files[1], groupGateway("alpha", "203.0.113.10", ""))
			alphaKey, _ := os.ReadFile(filepath.Join(dir, "certs", "alpha.key"))
			bravoKey, _ := os.ReadFile(filepath.Join(dir, "certs", "bravo.key"))

			// Every group loaded, as l7 render of all groups would.
			cfg, errs, err := dsl.NewDir(dir, func() time.Time { return certNow }).Load()
			if err != nil || len(errs) > 0 {
				t.Fatalf("load: %v %v", err, errs)
			}
			r := model.Resolve(cfg, model.Options{})
			if len(r.Config.Gateways) != 1 || r.Config.Gateways[0].Group != "alpha" {
				t.Fatalf("want alpha's gateway alone accepted, got %+v (problems %v)", r.Config.Gateways, r.Problems)
			}
			secrets := translate.Secrets(r, "alpha")
			if len(secrets) != 1 {
				t.Fatalf("want one secret for alpha, got %d", len(secrets))
			}
			got := secrets[0].GetTlsCertificate().GetPrivateKey().GetInlineBytes()
			if string(got) == string(bravoKey) {
				t.Fatal("alpha's Envoy is sent bravo's private key")
			}
			if string(got) != string(alphaKey) {
				t.Fatal("alpha's Envoy is not sent alpha's own key")
			}
			for _, c := range r.Config.Certificates {
				if c.Key.Equal(model.NewPrivateKey(bravoKey)) {
					t.Fatalf("bravo's key is among the served certificates (%s of %v)", c.Name, c.Gateway)
				}
			}
		})
	}
}

// TestForGroupOpensNoOtherGroupsFiles: an l7 of group alpha loads only
// alpha's files; bravo's key file is never opened (here it does not
// exist, which would be an error if it were), so bravo's key never enters
// alpha's memory. Other groups' files are still parsed: their errors are
// reported.
func TestForGroupOpensNoOtherGroupsFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "certs"), 0o700); err != nil {
		t.Fatal(err)
	}
	writePair(t, filepath.Join(dir, "certs"), "alpha", certNow.Add(-time.Hour), certNow.Add(time.Hour))
	writeFile(t, dir, "alpha.yaml", groupGateway("alpha", "203.0.113.10", ""))
	writeFile(t, dir, "bravo.yaml", groupGateway("bravo", "203.0.113.20", ""))
	writeFile(t, dir, "bravo-svc.yaml", "kind: gateway/service/v1\nname: b\ngroup: bravo\njwt: {hmacSecretFile: keys/missing.key}\nroutes: [{prefix: /, directResponse: {status: 200}}]\n")
	writeFile(t, dir, "broken.yaml", "kind: gateway/service/v1\nname: x\ngroup: bravo\nroutes: nope\n")
	catalog := func(group string) string {
		return "kind: gateway/interceptors/v1\nname: ops\ngroup: " + group + "\nexternal:\n  - {name: audit, url: \"http://198.51.100.5/check\", namespaces: [team]}\n"
	}
	writeFile(t, dir, "alpha-interceptors.yaml", catalog("alpha"))
	writeFile(t, dir, "bravo-interceptors.yaml", catalog("bravo"))

	cfg, errs, err := dsl.NewDir(dir, func() time.Time { return certNow }).ForGroup("alpha").Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "broken.yaml: ") {
		t.Fatalf("want only broken.yaml's parse error, got %v", errs)
	}
	if len(cfg.Gateways) != 1 || cfg.Gateways[0].Group != "alpha" || len(cfg.Services) != 0 {
		t.Fatalf("want alpha's gateway alone, got gateways %+v services %+v", cfg.Gateways, cfg.Services)
	}
	if len(cfg.Certificates) != 1 || cfg.Certificates[0].Gateway != cfg.Gateways[0].ID() {
		t.Fatalf("want alpha's certificate alone, got %+v", cfg.Certificates)
	}
	// The operator's declarations of the group are loaded (they were
	// skipped as of no group, so every tenant's endpoint was undeclared).
	if len(cfg.Interceptors) != 1 || cfg.Interceptors[0].Group != "alpha" {
		t.Fatalf("want alpha's interceptor declarations alone, got %+v", cfg.Interceptors)
	}
	// The same directory for every group: bravo's missing files are errors.
	_, errs, _ = dsl.NewDir(dir, func() time.Time { return certNow }).Load()
	if len(errs) != 3 {
		t.Fatalf("loading every group must open bravo's files too: %v", errs)
	}
}

// TestLaterFileNeverEvicts (issue 22): a file added later whose name sorts
// first claims a served gateway's VIP:port and a served service's name; the
// files served before keep them and the newcomer is the one refused. On
// main the claim went to the file path that sorts first, so adding a file
// took the listener (and every service on it) from an existing gateway.
func TestLaterFileNeverEvicts(t *testing.T) {
	dir := t.TempDir()
	svc := func(name, host string) string {
		return fmt.Sprintf("kind: gateway/service/v1\nname: %s\nhosts: [%s]\nlisteners: [pub/web]\nupstreams: [{name: u, endpoints: [\"198.51.100.1:80\"]}]\nroutes: [{prefix: /, target: u}]\n", name, host)
	}
	gw := func(name string) string {
		return fmt.Sprintf("kind: gateway/gateway/v1\nname: %s\nlisteners: [{name: web, vip: 203.0.113.10, port: 80, protocol: HTTP}]\n", name)
	}
	writeFile(t, dir, "z-gateway.yaml", gw("pub"))
	writeFile(t, dir, "z-shop.yaml", svc("shop", "shop.example.com"))
	d := dsl.NewDir(dir, time.Now)
	if _, errs, err := d.Load(); err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	writeFile(t, dir, "a-gateway.yaml", gw("intruder"))
	writeFile(t, dir, "a-shop.yaml", svc("shop", "evil.example.com"))
	cfg, errs, err := d.Load()
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	r := model.Resolve(cfg, model.Options{})
	if len(r.Config.Gateways) != 1 || r.Config.Gateways[0].Name != "pub" {
		t.Fatalf("the served gateway lost its VIP:port: accepted %+v, problems %v", r.Config.Gateways, r.Problems)
	}
	if len(r.Config.Services) != 1 || r.Config.Services[0].Origin != "z-shop.yaml" {
		t.Fatalf("the served service lost its name: accepted %+v, problems %v", r.Config.Services, r.Problems)
	}
	if len(r.Listeners) != 1 || strings.Join(r.Listeners[0].Services, ",") != "shop" {
		t.Fatalf("the listener lost its service: %+v", r.Listeners)
	}
	for _, p := range r.Problems {
		if p.Rejected && !strings.HasPrefix(string(p.Origin), "a-") {
			t.Errorf("an older file was refused: %v", p)
		}
	}
}
