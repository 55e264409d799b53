package translate_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	cryptotls "crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// resolve is model.Resolve for the tests of this package, which also
// has the real Envoy check the gateway config of every group the result
// holds (envoyAccepts): every config these tests render is one a real
// Envoy takes.
func resolve(t testing.TB, cfg model.Config, opts model.Options) model.Resolved {
	t.Helper()
	r := model.Resolve(cfg, opts)
	envoyAccepts(t, r)
	return r
}

// envoyAccepts renders each group of r as the static bootstrap "l7
// render" prints and runs "envoy --mode validate" on it (Envoy builds
// every listener, route table, filter and cluster and exits): the test
// fails with Envoy's own message when it refuses one. A set our own
// validator refuses is never served, so it is not asked. Key files
// are written where the bootstrap names them, in a temporary
// directory.
func envoyAccepts(t testing.TB, r model.Resolved) {
	t.Helper()
	for _, g := range translate.Groups(r) {
		set := translate.Group(r, g, translate.Gateway)
		if validate.Set(set) != nil {
			continue
		}
		b, err := translate.StaticBootstrap(set)
		if err != nil {
			t.Fatalf("group %q: %v", g, err)
		}
		dir := t.TempDir()
		keys := map[string]string{}
		for _, res := range set[resource.SecretType] {
			s := res.(*tls.Secret)
			if k := s.GetTlsCertificate().GetPrivateKey().GetInlineBytes(); len(k) > 0 {
				if _, err := cryptotls.X509KeyPair(s.GetTlsCertificate().GetCertificateChain().GetInlineBytes(), k); err != nil {
					continue // a stand-in ("chain", "key"): replaced below
				}
				p := filepath.Join(dir, s.GetName()+".key")
				if err := os.WriteFile(p, k, 0o600); err != nil {
					t.Fatal(err)
				}
				keys[s.GetName()] = p
			}
		}
		for _, s := range b.GetStaticResources().GetSecrets() {
			tc := s.GetTlsCertificate()
			if tc == nil {
				continue
			}
			p, ok := keys[s.GetName()]
			if !ok {
				chain, key := standInCertificate()
				tc.CertificateChain = &core.DataSource{Specifier: &core.DataSource_InlineBytes{InlineBytes: chain}}
				p = filepath.Join(dir, s.GetName()+".key")
				if err := os.WriteFile(p, key, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			tc.PrivateKey = &core.DataSource{Specifier: &core.DataSource_Filename{Filename: p}}
		}
		y, err := translate.YAML(b)
		if err != nil {
			t.Fatal(err)
		}
		if msg := envoyValidate(t, dir, y); msg != "" {
			t.Errorf("the real Envoy refuses the gateway config of group %q:\n%s", g, msg)
		}
	}
}

// standInCertificate is a self-signed certificate and key for the
// tests that give a listener a stand-in certificate ("chain"), which
// Envoy would refuse to load: what they test is not the certificate.
var standInCertificate = sync.OnceValues(func() ([]byte, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stand-in"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), DNSNames: []string{"stand-in.example"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	kd, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})
})

// validated remembers Envoy's verdict per bootstrap (by hash): many
// tests render the same config.
var validated sync.Map

// envoyValidate runs "envoy --mode validate" on the bootstrap y and
// returns "" when Envoy accepts it, else Envoy's message.
func envoyValidate(t testing.TB, dir string, y []byte) string {
	t.Helper()
	sum := sha256.Sum256(y)
	if v, ok := validated.Load(sum); ok {
		return v.(string)
	}
	bin, err := envoyproc.Binary()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "bootstrap.yaml")
	if err := os.WriteFile(p, y, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--mode", "validate", "-c", p, "--disable-hot-restart", "-l", "critical").CombinedOutput()
	msg := ""
	if err != nil {
		msg = strings.ReplaceAll(strings.TrimSpace(string(out)), p, "bootstrap.yaml")
		if i := strings.Index(msg, "error initializing configuration"); i >= 0 {
			msg = msg[i:]
		}
		if msg == "" {
			msg = err.Error()
		}
	}
	validated.Store(sum, msg)
	return msg
}
