package dsl_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
)

const tlsListenerHead = `kind: gateway/gateway/v1
name: gw
listeners:
  - name: secure
    vip: 203.0.113.10
    port: 443
    protocol: HTTPS
    certificates: [{name: c, sni: [a.example.com], certFile: c.crt, keyFile: c.key}]
`

const tlsServiceHead = `kind: gateway/service/v1
name: app
routes: [{prefix: /, target: u}]
upstreams:
  - name: u
    endpoints: ["198.51.100.1:443"]
`

func TestParseTLSPolicy(t *testing.T) {
	d, err := dsl.Parse("gw.yaml", []byte(tlsListenerHead+`    tls: {minVersion: 1.2, cipherSuites: [ECDHE-RSA-AES128-GCM-SHA256]}
    clientCertificate: {caFile: ca.crt, required: false, forwardClientCert: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	l := d.Gateway.Listeners[0]
	if l.TLSPolicy == nil || l.TLSPolicy.MinVersion != "1.2" || !slices.Equal(l.TLSPolicy.CipherSuites, []string{"ECDHE-RSA-AES128-GCM-SHA256"}) {
		t.Errorf("policy = %+v", l.TLSPolicy)
	}
	if c := l.ClientCertificate; c == nil || c.Required || !c.ForwardDetails || len(c.CA) != 0 {
		t.Errorf("client certificate = %+v (the CA is read by Dir, not Parse)", c)
	}
	if len(d.CAFiles) != 1 || d.CAFiles[0].Path != "ca.crt" || d.CAFiles[0].Listener != 0 {
		t.Errorf("CA files = %+v", d.CAFiles)
	}
	d, err = dsl.Parse("gw.yaml", []byte(tlsListenerHead+"    tls: {minVersion: \"1.3\"}\n    clientCertificate: {caFile: ca.crt}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := d.Gateway.Listeners[0]; l.TLSPolicy.MinVersion != "1.3" || !l.ClientCertificate.Required || l.ClientCertificate.ForwardDetails {
		t.Errorf("defaults: policy %+v, client certificate %+v; want required, not forwarded", l.TLSPolicy, l.ClientCertificate)
	}
	d, err = dsl.Parse("app.yaml", []byte(tlsServiceHead+"    tls: {sni: u.internal, caFile: ca.crt}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if u := d.Service.Upstreams[0].TLS; u == nil || u.SNI != "u.internal" || !slices.Equal(u.VerifiedNames(), []string{"u.internal"}) {
		t.Errorf("upstream TLS = %+v", u)
	}
	if len(d.CAFiles) != 1 || d.CAFiles[0].Field != "upstreams[0].tls.caFile" || d.CAFiles[0].Upstream != 0 {
		t.Errorf("CA files = %+v", d.CAFiles)
	}
}

func TestParseTLSPolicyErrors(t *testing.T) {
	for name, tc := range map[string]struct{ file, src, want string }{
		"TLS 1.1":          {"gw.yaml", tlsListenerHead + "    tls: {minVersion: 1.1}\n", "listeners[0].tls.minVersion: TLS 1.1 is refused"},
		"version word":     {"gw.yaml", tlsListenerHead + "    tls: {minVersion: latest}\n", "listeners[0].tls.minVersion"},
		"unknown cipher":   {"gw.yaml", tlsListenerHead + "    tls: {cipherSuites: [ECDHE-RSA-AES128-GCM-SHA256, NOPE]}\n", "listeners[0].tls.cipherSuites[1]: unknown cipher suite \"NOPE\""},
		"CBC cipher":       {"gw.yaml", tlsListenerHead + "    tls: {cipherSuites: [ECDHE-RSA-AES128-SHA]}\n", "listeners[0].tls.cipherSuites[0]: \"ECDHE-RSA-AES128-SHA\" is refused (CBC mode)"},
		"RSA kex":          {"gw.yaml", tlsListenerHead + "    tls: {cipherSuites: [AES128-GCM-SHA256]}\n", "no forward secrecy"},
		"3DES":             {"gw.yaml", tlsListenerHead + "    tls: {cipherSuites: [DES-CBC3-SHA]}\n", "3DES"},
		"TLS 1.3 suite":    {"gw.yaml", tlsListenerHead + "    tls: {cipherSuites: [TLS_AES_128_GCM_SHA256]}\n", "TLS 1.3 suite"},
		"suites with 1.3":  {"gw.yaml", tlsListenerHead + "    tls: {minVersion: 1.3, cipherSuites: [ECDHE-RSA-AES128-GCM-SHA256]}\n", "listeners[0].tls.cipherSuites: apply to TLS 1.2 only"},
		"duplicate suite":  {"gw.yaml", tlsListenerHead + "    tls: {cipherSuites: [ECDHE-RSA-AES128-GCM-SHA256, ECDHE-RSA-AES128-GCM-SHA256]}\n", "listeners[0].tls.cipherSuites[1]"},
		"unknown tls key":  {"gw.yaml", tlsListenerHead + "    tls: {minVersion: 1.2, maxVersion: 1.3}\n", "maxVersion"},
		"no CA file":       {"gw.yaml", tlsListenerHead + "    clientCertificate: {required: true}\n", "listeners[0].clientCertificate.caFile: required"},
		"unknown mtls key": {"gw.yaml", tlsListenerHead + "    clientCertificate: {caFile: ca.crt, optional: true}\n", "optional"},
		"tls on HTTP": {"gw.yaml", "kind: gateway/gateway/v1\nname: gw\nlisteners:\n  - {name: web, vip: 203.0.113.10, port: 80, protocol: HTTP, tls: {minVersion: 1.3}}\n",
			"listeners[0].tls: only HTTPS listeners"},
		"mtls on TCP": {"gw.yaml", "kind: gateway/gateway/v1\nname: gw\nlisteners:\n  - {name: db, vip: 203.0.113.10, port: 5432, protocol: TCP, target: a/b, clientCertificate: {caFile: ca.crt}}\n",
			"listeners[0].clientCertificate: only HTTPS listeners"},
		"no SNI":               {"app.yaml", tlsServiceHead + "    tls: {caFile: ca.crt}\n", "upstreams[0].tls.sni: required"},
		"wildcard SNI":         {"app.yaml", tlsServiceHead + "    tls: {sni: \"*.internal\", caFile: ca.crt}\n", "upstreams[0].tls.sni"},
		"upstream no CA":       {"app.yaml", tlsServiceHead + "    tls: {sni: u.internal}\n", "upstreams[0].tls.caFile: required"},
		"bad SAN":              {"app.yaml", tlsServiceHead + "    tls: {sni: u.internal, caFile: ca.crt, subjectAltNames: [\"U .internal\"]}\n", "upstreams[0].tls.subjectAltNames[0]"},
		"unknown upstream key": {"app.yaml", tlsServiceHead + "    tls: {sni: u.internal, caFile: ca.crt, insecure: true}\n", "insecure"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dsl.Parse(tc.file, []byte(tc.src))
			if err == nil || !strings.HasPrefix(err.Error(), tc.file+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %s and %q", err, tc.file, tc.want)
			}
		})
	}
}

// TestLoadCAFiles: Dir reads each CA bundle into the object that names it;
// a missing file, or one holding a private key, rejects that file alone
// with an error naming it and the field, and never showing the key.
func TestLoadCAFiles(t *testing.T) {
	dir := t.TempDir()
	writePair(t, dir, "c", certNow.AddDate(-1, 0, 0), certNow.AddDate(1, 0, 0))
	writePair(t, dir, "ca", certNow.AddDate(-1, 0, 0), certNow.AddDate(1, 0, 0))
	ca, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("gw.yaml", tlsListenerHead+"    clientCertificate: {caFile: ca.crt}\n")
	write("app.yaml", tlsServiceHead+"    tls: {sni: u.internal, caFile: ca.crt}\n")
	src := dsl.NewDir(dir, func() time.Time { return certNow })
	cfg, errs, err := src.Load()
	if err != nil || len(errs) > 0 {
		t.Fatalf("load: %v %v", err, errs)
	}
	if len(cfg.Gateways) != 1 || !bytes.Equal(cfg.Gateways[0].Listeners[0].ClientCertificate.CA, ca) {
		t.Errorf("gateway CA not read: %+v", cfg.Gateways)
	}
	if len(cfg.Services) != 1 || !bytes.Equal(cfg.Services[0].Upstreams[0].TLS.CA, ca) {
		t.Errorf("upstream CA not read: %+v", cfg.Services)
	}

	// A private key where the CA should be: refused, the key never shown.
	write("app.yaml", tlsServiceHead+"    tls: {sni: u.internal, caFile: c.key}\n")
	// A CA file that is not there.
	write("gw.yaml", tlsListenerHead+"    clientCertificate: {caFile: missing.crt}\n")
	write("other.yaml", strings.Replace(tlsServiceHead, "name: app", "name: other", 1))
	cfg, errs, err = src.Load()
	if err != nil {
		t.Fatal(err)
	}
	key, _ := os.ReadFile(filepath.Join(dir, "c.key"))
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	if len(errs) != 2 || !strings.Contains(all, "app.yaml: upstreams[0].tls.caFile: c.key: holds a \"PRIVATE KEY\" block") ||
		!strings.Contains(all, "gw.yaml: listeners[0].clientCertificate.caFile: ") {
		t.Errorf("errors:\n%s", all)
	}
	if strings.Contains(all, strings.Split(string(key), "\n")[1]) {
		t.Error("an error shows the private key")
	}
	// The bad files keep their last good versions, with the CA read then.
	if len(cfg.Services) != 2 || cfg.Services[1].Name != "other" || len(cfg.Gateways) != 1 ||
		!bytes.Equal(cfg.Services[0].Upstreams[0].TLS.CA, ca) || !bytes.Equal(cfg.Gateways[0].Listeners[0].ClientCertificate.CA, ca) {
		t.Errorf("want the last good app and gateway and the new other: services %d, gateways %d", len(cfg.Services), len(cfg.Gateways))
	}
}

func TestCheckCABundle(t *testing.T) {
	ca, err := os.ReadFile("../testdata/config/certs/test-ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		pem  string
		want string
	}{
		"one":           {string(ca), ""},
		"two":           {string(ca) + string(ca), ""},
		"empty":         {"\n", "empty"},
		"junk":          {"hello", "no PEM certificate"},
		"junk after":    {string(ca) + "hello", "not PEM after 1 certificate"},
		"bad DER":       {"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "certificate 1"},
		"key in bundle": {string(ca) + "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n", "\"EC PRIVATE KEY\" block"},
	} {
		t.Run(name, func(t *testing.T) {
			err := model.CheckCABundle([]byte(tc.pem))
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
