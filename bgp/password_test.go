package bgp

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestPasswordNeverPrinted: a PeerConfig holding a password prints and
// logs without it, in every fmt verb and in slog.
func TestPasswordNeverPrinted(t *testing.T) {
	const secret = "s3cret-md5"
	p := PeerConfig{Name: "BGPPeer tor-a", Address: "198.18.0.1", ASN: 64500, Password: secret}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("peer", "peer", p, "password", p.Password)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("peer", "peer", p, "password", p.Password)
	out := fmt.Sprintf("%v %+v %#v %s", p, p, p, p.Password) + buf.String()
	if strings.Contains(out, secret) {
		t.Fatalf("the password leaks: %s", out)
	}
	if !strings.Contains(out, "[redacted]") {
		t.Fatalf("no redaction marker in %s", out)
	}
}

// TestPasswordChecks: a password longer than TCP MD5 allows, or one
// combined with a password file, is refused by field; a valid one is
// what the speaker hands GoBGP.
func TestPasswordChecks(t *testing.T) {
	cfg := Config{LocalASN: 64512, RouterID: "198.18.0.2", AllowedPrefixes: []string{"203.0.113.0/24"}}
	for name, tc := range map[string]struct {
		peer    PeerConfig
		wantErr string
	}{
		"too long":  {PeerConfig{Name: "BGPPeer a", Address: "198.18.0.1", ASN: 1, Password: Password(strings.Repeat("x", 81))}, "peer BGPPeer a: password: is longer than the 80 bytes"},
		"with file": {PeerConfig{Name: "BGPPeer a", Address: "198.18.0.1", ASN: 1, Password: "x", PasswordFile: "/p"}, "peer BGPPeer a: passwordFile: cannot be combined"},
		"valid":     {PeerConfig{Name: "BGPPeer a", Address: "198.18.0.1", ASN: 1, Password: "right"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			var ps problems
			peers := defaultedPeers([]PeerConfig{tc.peer})
			cfg.checkPeerList(&ps, peers)
			if tc.wantErr == "" {
				if len(ps) != 0 {
					t.Fatalf("refused: %v", ps)
				}
				pw, err := readPassword(0, peers[0])
				if err != nil || pw != "right" {
					t.Fatalf("password %q, %v; want the Secret's", pw, err)
				}
				return
			}
			if len(ps) != 1 || !strings.Contains(ps[0].Error(), tc.wantErr) {
				t.Fatalf("problems %v, want one containing %q", ps, tc.wantErr)
			}
		})
	}
}
