package dsl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
)

const jwtHead = "kind: gateway/service/v1\nname: api\nupstreams: [{name: u, endpoints: [\"198.51.100.1:80\"]}, {name: idp, endpoints: [\"198.51.100.9:80\"]}]\n"

func TestParseJWTErrorsNameFileAndField(t *testing.T) {
	for name, tc := range map[string]struct{ src, want string }{
		"no key":              {"jwt: {issuer: x}\nroutes: [{prefix: /, target: u}]\n", "jwt: set exactly one"},
		"two keys":            {"jwt: {hmacSecretFile: a, jwksFile: b}\nroutes: [{prefix: /, target: u}]\n", "jwt: set exactly one"},
		"algorithm alone":     {"jwt: {jwksFile: a, algorithm: HS256}\nroutes: [{prefix: /, target: u}]\n", "jwt.algorithm"},
		"bad algorithm":       {"jwt: {hmacSecretFile: a, algorithm: none}\nroutes: [{prefix: /, target: u}]\n", "jwt.hmacSecretFile"},
		"unknown field":       {"jwt: {jwksFile: a, secret_key: x}\nroutes: [{prefix: /, target: u}]\n", "secret_key"},
		"auth without jwt":    {"routes: [{prefix: /, target: u, auth: {roles: [a]}}]\n", "routes[0].auth"},
		"unknown auth field":  {"jwt: {jwksFile: a}\nroutes: [{prefix: /, target: u, auth: {roles_all: [a]}}]\n", "roles_all"},
		"remote no upstream":  {"jwt: {remoteJwks: {url: \"http://idp/jwks\", upstream: nope}}\nroutes: [{prefix: /, target: u}]\n", "jwt.remoteJwks.upstream"},
		"remote bad url":      {"jwt: {remoteJwks: {url: \"ftp://idp\", upstream: idp}}\nroutes: [{prefix: /, target: u}]\n", "jwt.remoteJwks.url"},
		"claim to bad header": {"jwt: {jwksFile: a, claimMappings: {sub: Authorization}}\nroutes: [{prefix: /, target: u}]\n", "jwt.claimMappings.sub"},
		"bad cookie":          {"jwt: {jwksFile: a, cookie: \"a b\"}\nroutes: [{prefix: /, target: u}]\n", "jwt.cookie"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dsl.Parse("api.yaml", []byte(jwtHead+tc.src))
			if err == nil || !strings.HasPrefix(err.Error(), "api.yaml: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestJWTKeyFiles: the key files are read on load; a bad one rejects the
// service alone with the file and field named, never the secret.
func TestJWTKeyFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(n, s string) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("other.yaml", "kind: gateway/service/v1\nname: other\nupstreams: [{name: u, endpoints: []}]\nroutes: [{prefix: /o, target: u}]\n")
	write("api.yaml", jwtHead+"jwt: {hmacSecretFile: hs.key}\nroutes: [{prefix: /, target: u}]\n")
	write("hs.key", "tooshort\n")
	d := dsl.NewDir(dir, time.Now)
	cfg, errs, _ := d.Load()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "jwt.hmacSecretFile") || strings.Contains(errs[0].Error(), "tooshort") {
		t.Fatalf("errs = %v", errs)
	}
	if len(cfg.Services) != 1 || cfg.Services[0].Name != "other" {
		t.Fatalf("services = %v", cfg.Services)
	}
	write("hs.key", strings.Repeat("x", 40)+"\n")
	cfg, errs, _ = d.Load()
	if len(errs) != 0 || len(cfg.Services) != 2 {
		t.Fatalf("after the fix: %v, %d services", errs, len(cfg.Services))
	}
	for _, s := range cfg.Services {
		if s.Name == "api" && (s.JWT.HMAC.Empty() || string(s.JWT.HMAC.Reveal()) != strings.Repeat("x", 40) || s.JWT.HMACAlg != "HS256") {
			t.Errorf("api's key = %q %s", s.JWT.HMAC, s.JWT.HMACAlg)
		}
	}
	write("api.yaml", jwtHead+"jwt: {publicKeyFile: missing.pem}\nroutes: [{prefix: /, target: u}]\n")
	if _, errs, _ = d.Load(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "api.yaml") && strings.Contains(errs[0].Error(), "jwt.publicKeyFile") {
		t.Fatalf("missing key file: %v", errs)
	}
	write("api.yaml", jwtHead+"jwt: {publicKeyFile: ../../etc/passwd}\nroutes: [{prefix: /, target: u}]\n")
	if _, errs, _ = d.Load(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "api.yaml") && strings.Contains(errs[0].Error(), "jwt.publicKeyFile") {
		t.Fatalf("key file outside the directories: %v", errs)
	}
}

// TestParseAcceptsEachKeyFileKind: Parse reads no file and checks a
// service whose key is still a file name with a stand-in, which the key
// checks must accept (a stand-in jwks.Check refused rejected every
// publicKeyFile and jwksFile service before its file was read).
func TestParseAcceptsEachKeyFileKind(t *testing.T) {
	for _, jwt := range []string{"{hmacSecretFile: hs.key}", "{publicKeyFile: rs.pem}", "{jwksFile: keys.json}"} {
		if _, err := dsl.Parse("api.yaml", []byte(jwtHead+"jwt: "+jwt+"\nroutes: [{prefix: /, target: u}]\n")); err != nil {
			t.Errorf("jwt: %s: %v", jwt, err)
		}
	}
}
