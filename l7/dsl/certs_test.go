package dsl_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
)

var certNow = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

// writePair writes a throw-away self-signed certificate valid from nb to
// na, and its key, as dir/name.crt and dir/name.key.
func writePair(t *testing.T, dir, name string, nb, na time.Time) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + ".example.com"}, NotBefore: nb, NotAfter: na}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	for ext, b := range map[string][]byte{
		".crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		".key": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}),
	} {
		if err := os.WriteFile(filepath.Join(dir, name+ext), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

const gatewayWithCert = `kind: gateway/gateway/v1
name: public
group: edge
listeners:
  - name: secure
    vip: 203.0.113.10
    port: 443
    protocol: HTTPS
    certificates:
      - name: shop
        sni: [shop.example.com]
        certFile: %s
        keyFile: %s
`

// TestCertificateRefusals: each bad certificate is refused with an error
// naming the DSL file, the certificate and the file at fault, and without
// hanging the load; a good one from an allowed directory is served.
func TestCertificateRefusals(t *testing.T) {
	certDir, outside := t.TempDir(), t.TempDir()
	writePair(t, certDir, "good", certNow.Add(-time.Hour), certNow.Add(30*24*time.Hour))
	writePair(t, certDir, "other", certNow.Add(-time.Hour), certNow.Add(30*24*time.Hour))
	writePair(t, certDir, "expired", certNow.Add(-48*time.Hour), certNow.Add(-time.Hour))
	writePair(t, certDir, "early", certNow.Add(time.Hour), certNow.Add(48*time.Hour))
	writePair(t, outside, "away", certNow.Add(-time.Hour), certNow.Add(30*24*time.Hour))
	if err := syscall.Mkfifo(filepath.Join(certDir, "pipe.key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(certDir, "big.crt"), make([]byte, 300<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	in := func(dir, f string) string { return filepath.Join(dir, f) }
	for name, tc := range map[string]struct {
		cert, key string
		want      []string // all in the error; none means served
	}{
		"good, in the certificate directory": {in(certDir, "good.crt"), in(certDir, "good.key"), nil},
		"outside the allowed directories":    {in(outside, "away.crt"), in(outside, "away.key"), []string{"certFile", "away.crt", "outside the directories"}},
		"relative path escaping the config":  {"REL:" + in(outside, "away.crt"), in(certDir, "good.key"), []string{"certFile", "outside the directories"}},
		"key is a named pipe":                {in(certDir, "good.crt"), in(certDir, "pipe.key"), []string{"keyFile", "pipe.key", "not a regular file"}},
		"certificate too large":              {in(certDir, "big.crt"), in(certDir, "good.key"), []string{"certFile", "big.crt", "larger than"}},
		"key of another certificate":         {in(certDir, "good.crt"), in(certDir, "other.key"), []string{"good.crt", "other.key", "does not match"}},
		"expired":                            {in(certDir, "expired.crt"), in(certDir, "expired.key"), []string{"expired.crt", "expired at"}},
		"not yet valid":                      {in(certDir, "early.crt"), in(certDir, "early.key"), []string{"early.crt", "not valid before"}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if p, ok := strings.CutPrefix(tc.cert, "REL:"); ok {
				rel, err := filepath.Rel(dir, p)
				if err != nil || !strings.HasPrefix(rel, "..") {
					t.Fatalf("rel %q %v", rel, err)
				}
				tc.cert = rel
			}
			if err := os.WriteFile(filepath.Join(dir, "gw.yaml"), []byte(fmt.Sprintf(gatewayWithCert, tc.cert, tc.key)), 0o600); err != nil {
				t.Fatal(err)
			}
			type loaded struct {
				n    int
				errs []error
			}
			done := make(chan loaded, 1)
			go func() {
				cfg, errs, _ := dsl.NewDir(dir, func() time.Time { return certNow }, certDir).Load()
				done <- loaded{len(cfg.Certificates), errs}
			}()
			var got loaded
			select {
			case got = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Load hung")
			}
			if tc.want == nil {
				if len(got.errs) > 0 || got.n != 1 {
					t.Fatalf("want the certificate served; got %d, errors %v", got.n, got.errs)
				}
				return
			}
			if got.n != 0 || len(got.errs) != 1 {
				t.Fatalf("want one error and nothing served; got %d certificates, errors %v", got.n, got.errs)
			}
			msg := got.errs[0].Error()
			for _, w := range append(tc.want, "gw.yaml", "shop") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

// TestDSLFileNamedPipeDoesNotHang: a *.yaml that is a named pipe is
// reported, not read forever.
func TestDSLFileNamedPipeDoesNotHang(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan []error, 1)
	go func() { _, errs, _ := dsl.NewDir(dir, time.Now).Load(); done <- errs }()
	select {
	case errs := <-done:
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "not a regular file") {
			t.Fatalf("errors %v; want pipe.yaml refused as not a regular file", errs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load hung on a named pipe")
	}
}
