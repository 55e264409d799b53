package edge

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const (
	issuer   = "https://auth.example.com"
	audience = "edge"
)

// jwtService is a service on listener public/web whose tokens are
// verified with the key in keys/<name>.key (hmacSecretFile for HS256,
// else publicKeyFile), from Authorization or the cml_access cookie, with
// sub copied to x-user-id; /public lets requests without a valid token
// through. extra is added to its jwt block.
func jwtService(name, alg string, b *backend, extra string) string {
	key := "publicKeyFile: keys/" + name + ".key"
	if alg == "HS256" {
		key = "hmacSecretFile: keys/" + name + ".key\n  algorithm: HS256"
	}
	return fmt.Sprintf(`kind: gateway/service/v1
name: %[1]s
group: edge
hosts: [%[1]s.example.com]
listeners: [public/web]
jwt:
  issuer: %[2]s
  audiences: [%[3]s]
  %[4]s
  cookie: cml_access
  claimMappings: {sub: x-user-id}
%[5]s
upstreams: [{name: main, endpoints: ["%[6]s"]}]
routes:
  - {name: public, prefix: /public, target: main, auth: {required: false}}
  - {name: all, prefix: /, target: main}
`, name, issuer, audience, key, extra, b.addr())
}

// TestJWT: tokens of each algorithm the DSL takes (HS256 secret, RS256,
// ES256 and EdDSA public keys), from Authorization and from the cookie;
// valid ones reach the backend with their subject in x-user-id, every
// kind of bad or missing token is jwt_authn's 401. With both a Bearer
// token and the cookie, the header wins and the cookie is not read; an
// optional route lets a bad token through as anonymous.
func TestJWT(t *testing.T) {
	const vip, node = "127.0.21.11", "127.0.21.111"
	b := startBackend(t, "api")
	algs := map[string]string{"hs": "HS256", "rs": "RS256", "es": "ES256", "ed": "EdDSA"}
	signers, others := map[string]signer{}, map[string]signer{}
	files := map[string]string{"gw.yaml": fmt.Sprintf(`kind: gateway/gateway/v1
name: public
group: edge
listeners: [{name: web, vip: %s, port: 21080, protocol: HTTP}]
`, vip)}
	for name, alg := range algs {
		signers[name], others[name] = newSigner(t, alg), newSigner(t, alg)
		files["keys/"+name+".key"] = signers[name].keyFile(t)
		extra := "  stripAuthorization: false"
		if name == "rs" {
			extra = "  stripAuthorization: true"
		}
		files[name+".yaml"] = jwtService(name, alg, b, extra)
	}
	startGateway(t, node, files)
	c := plainClient(vip + ":21080")

	for name, alg := range algs {
		s, other := signers[name], others[name]
		url := "http://" + name + ".example.com/orders"
		valid := s.token(t, validClaims(issuer, audience, "user-"+name, nil))
		for _, tc := range []struct {
			name   string
			header map[string]string
			status int
			user   string // x-user-id upstream ("" none)
		}{
			{"valid in header", bearer(valid), 200, "user-" + name},
			{"valid in cookie", cookie(valid), 200, "user-" + name},
			{"valid in cookie among others", map[string]string{"cookie": "a=1; cml_access=" + valid + "; b=2"}, 200, "user-" + name},
			{"expired", bearer(s.token(t, claims{"iss": issuer, "aud": audience, "sub": "u", "exp": time.Now().Add(-2 * time.Hour).Unix()})), 401, ""},
			{"not yet valid", bearer(s.token(t, validClaims(issuer, audience, "u", claims{"nbf": time.Now().Add(time.Hour).Unix()}))), 401, ""},
			{"other key", bearer(other.token(t, validClaims(issuer, audience, "u", nil))), 401, ""},
			{"other issuer", bearer(s.token(t, validClaims("https://evil.example.com", audience, "u", nil))), 401, ""},
			{"other audience", bearer(s.token(t, validClaims(issuer, "billing", "u", nil))), 401, ""},
			{"garbage", bearer("not.a.token"), 401, ""},
			{"missing", nil, 401, ""},
			{"expired in cookie", cookie(s.token(t, claims{"iss": issuer, "aud": audience, "sub": "u", "exp": time.Now().Add(-2 * time.Hour).Unix()})), 401, ""},
		} {
			t.Run(alg+"/"+tc.name, func(t *testing.T) {
				r := send(t, c, request{URL: url, Header: tc.header})
				r.wantStatus(t, tc.status)
				if tc.status == 401 {
					if r.Saw != nil {
						t.Errorf("the backend saw a refused request: %+v", r.Saw)
					}
					if !strings.HasPrefix(r.Header.Get("www-authenticate"), "Bearer") {
						t.Errorf("www-authenticate %q, want a Bearer challenge", r.Header.Get("www-authenticate"))
					}
					return
				}
				if got, _ := r.sawHeader("x-user-id"); got != tc.user {
					t.Errorf("x-user-id upstream %q, want %q", got, tc.user)
				}
			})
		}
	}

	t.Run("stripAuthorization", func(t *testing.T) {
		for name, strip := range map[string]bool{"rs": true, "hs": false} {
			r := send(t, c, request{URL: "http://" + name + ".example.com/", Header: bearer(signers[name].token(t, validClaims(issuer, audience, "u", nil)))})
			r.wantStatus(t, 200)
			if _, ok := r.sawHeader("authorization"); ok == strip {
				t.Errorf("%s (stripAuthorization %v): the backend saw authorization: %v", name, strip, ok)
			}
		}
	})

	// Both a Bearer token and the cookie: the header wins (seed 001 reads
	// the cookie only when Authorization is empty).
	hs := signers["hs"]
	alice := hs.token(t, validClaims(issuer, audience, "alice", nil))
	bob := hs.token(t, validClaims(issuer, audience, "bob", nil))
	both := func(h, k string) map[string]string {
		return map[string]string{"authorization": "Bearer " + h, "cookie": "cml_access=" + k}
	}
	for _, tc := range []struct {
		name   string
		path   string
		header map[string]string
		status int
		user   string
	}{
		{"valid header, garbage cookie", "/orders", both(alice, "garbage"), 200, "alice"},
		{"garbage header, valid cookie", "/orders", both("garbage", bob), 401, ""},
		{"expired header, valid cookie", "/orders", both(hs.token(t, claims{"iss": issuer, "aud": audience, "sub": "x", "exp": time.Now().Add(-2 * time.Hour).Unix()}), bob), 401, ""},
		{"two valid tokens: the header's subject only", "/orders", both(alice, bob), 200, "alice"},
		{"Basic credentials are no Bearer token: cookie read", "/orders", map[string]string{"authorization": "Basic dTpw", "cookie": "cml_access=" + bob}, 200, "bob"},
		{"optional route, no token: anonymous", "/public/x", nil, 200, ""},
		{"optional route, garbage header: anonymous", "/public/x", bearer("garbage"), 200, ""},
		{"optional route, garbage header and valid cookie: anonymous", "/public/x", both("garbage", bob), 200, ""},
		{"optional route, garbage cookie: anonymous", "/public/x", cookie("garbage"), 200, ""},
		{"optional route, valid cookie", "/public/x", cookie(bob), 200, "bob"},
		{"optional route, valid header", "/public/x", bearer(alice), 200, "alice"},
		{"optional route, spoofed x-user-id removed", "/public/x", map[string]string{"x-user-id": "root"}, 200, ""},
	} {
		t.Run("header and cookie/"+tc.name, func(t *testing.T) {
			r := send(t, c, request{URL: "http://hs.example.com" + tc.path, Header: tc.header})
			r.wantStatus(t, tc.status)
			if tc.status != 200 {
				return
			}
			got, ok := r.sawHeader("x-user-id")
			if got != tc.user || (tc.user == "" && ok) {
				t.Errorf("x-user-id upstream %q (present %v), want %q", got, ok, tc.user)
			}
		})
	}
}

func bearer(tok string) map[string]string { return map[string]string{"authorization": "Bearer " + tok} }

func cookie(tok string) map[string]string { return map[string]string{"cookie": "cml_access=" + tok} }
