package authz

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc/codes"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

func htpasswdFile(t *testing.T, lines string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(p, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// TestBasicAuthOverCheck: basicAuth as Envoy's ext_authz calls it, with a
// real bcrypt htpasswd file: no or wrong credentials answer 401 with the
// Basic challenge; the right ones pass without Authorization upstream; a
// file holding any other kind of hash fails closed (503).
func TestBasicAuthOverCheck(t *testing.T) {
	e := newEnv(t)
	h, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := htpasswdFile(t, "# ops\nops:"+string(h)+"\n")
	shaFile := htpasswdFile(t, "ops:{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M=\n")
	e.declare(Declared{UsersFiles: map[string]bool{users: true, shaFile: true, "/nonexistent/htpasswd": true}})
	value := encode(t, chain.Interceptor{Type: chain.TypeBasicAuth, UsersFile: users, Realm: "ops"})

	for name, auth := range map[string]string{"none": "", "wrong password": basic("ops", "nope"),
		"unknown user": basic("eve", "s3cret"), "not basic": "Bearer x"} {
		hs := map[string]string{}
		if auth != "" {
			hs["authorization"] = auth
		}
		resp := e.check(t, value, req{headers: hs})
		d := resp.GetDeniedResponse()
		if d.GetStatus().GetCode() != 401 || resp.GetStatus().GetCode() != int32(codes.Unauthenticated) {
			t.Errorf("%s: %v, want 401", name, resp)
			continue
		}
		if got := d.GetHeaders(); len(got) < 2 || got[1].GetHeader().GetValue() != `Basic realm="ops", charset="UTF-8"` {
			t.Errorf("%s: headers %v, want the Basic challenge", name, got)
		}
	}
	for range 2 { // the second time from the verified cache
		ok := e.check(t, value, req{headers: map[string]string{"authorization": basic("ops", "s3cret")}})
		if ok.GetStatus().GetCode() != int32(codes.OK) {
			t.Fatalf("right credentials: %v", ok)
		}
		if rm := ok.GetOkResponse().GetHeadersToRemove(); len(rm) != 1 || rm[0] != "authorization" {
			t.Errorf("headers to remove %v, want authorization", rm)
		}
	}

	sha := encode(t, chain.Interceptor{Type: chain.TypeBasicAuth, UsersFile: shaFile})
	if got := e.check(t, sha, req{headers: map[string]string{"authorization": basic("ops", "test")}}); got.GetDeniedResponse().GetStatus().GetCode() != 503 {
		t.Errorf("SHA-1 htpasswd: %v, want 503 (refused, fail closed)", got)
	}
	missing := encode(t, chain.Interceptor{Type: chain.TypeBasicAuth, UsersFile: "/nonexistent/htpasswd"})
	if got := e.check(t, missing, req{headers: map[string]string{"authorization": basic("ops", "s3cret")}}); got.GetDeniedResponse().GetStatus().GetCode() != 503 {
		t.Errorf("missing file: %v, want 503", got)
	}
}
