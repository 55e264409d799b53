package bgp

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseExampleAppliesDefaults(t *testing.T) {
	data, err := os.ReadFile("testdata/director.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data)
	if err != nil {
		t.Fatalf("parse example: %v", err)
	}
	if c.ListenPort != NoListen {
		t.Errorf("listenPort = %d, want %d (dial out only)", c.ListenPort, NoListen)
	}
	p := c.Peers[0]
	if p.Port != 179 || p.MaxPrefixes != DefaultMaxPrefixes || p.ConnectRetrySeconds != DefaultConnectRetrySeconds {
		t.Errorf("peer defaults = %+v", p)
	}
	if c.API.Enabled {
		t.Error("api enabled by default")
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	const good = `
localASN: 64512
routerID: 198.18.0.2
allowedPrefixes: [203.0.113.0/24]
peers: [{address: 198.18.0.1, asn: 64500}]
`
	cases := map[string]struct {
		yaml      string
		wantField string
	}{
		"unknown field":               {good + "password: hunter2\n", "password"},
		"no asn":                      {strings.Replace(good, "localASN: 64512", "localASN: 0", 1), "localASN"},
		"bad router id":               {strings.Replace(good, "198.18.0.2", "nope", 1), "routerID"},
		"host bits in range":          {strings.Replace(good, "203.0.113.0/24", "203.0.113.5/24", 1), "allowedPrefixes[0]"},
		"default route allowed":       {strings.Replace(good, "203.0.113.0/24", "0.0.0.0/0", 1), "allowedPrefixes[0]"},
		"no ranges":                   {strings.Replace(good, "[203.0.113.0/24]", "[]", 1), "allowedPrefixes"},
		"peer without asn":            {strings.Replace(good, ", asn: 64500", "", 1), "peers[0].asn"},
		"hold too short":              {strings.Replace(good, "asn: 64500}", "asn: 64500, holdTimeSeconds: 2}", 1), "peers[0].holdTimeSeconds"},
		"keepalive above hold":        {strings.Replace(good, "asn: 64500}", "asn: 64500, keepaliveSeconds: 5}", 1), "peers[0].keepaliveSeconds"},
		"multihop and gtsm":           {strings.Replace(good, "asn: 64500}", "asn: 64500, ebgpMultihopTTL: 2, ttlSecurityHops: 1}", 1), "peers[0].ttlSecurityHops"},
		"duplicate peer":              {strings.Replace(good, "asn: 64500}]", "asn: 64500}, {address: 198.18.0.1, asn: 64501}]", 1), "peers[1].address"},
		"api on all addresses":        {good + "api: {enabled: true, address: \"0.0.0.0:50051\"}\n", "api.address"},
		"api on a routable addr":      {good + "api: {enabled: true, address: \"198.18.0.2:50051\"}\n", "api.address"},
		"bad listen port":             {good + "listenPort: 70000\n", "listenPort"},
		"bad next hop":                {good + "nextHop: 2001:db8::1\n", "nextHop"},
		"restart time without gr":     {good + "gracefulRestartSeconds: 30\n", "gracefulRestartSeconds"},
		"restart time too long":       {good + "gracefulRestart: true\ngracefulRestartSeconds: 4096\n", "gracefulRestartSeconds"},
		"IPv6 range without next hop": {strings.Replace(good, "[203.0.113.0/24]", "[203.0.113.0/24, 2001:db8::/120]", 1), "allowedPrefixes[1]"},
		"IPv4 next hop for IPv6":      {good + "nextHopIPv6: 198.18.0.2\n", "nextHopIPv6"},
		"link-local IPv6 next hop":    {good + "nextHopIPv6: fe80::2\n", "nextHopIPv6"},
		"IPv6 aggregate beyond /128": {strings.Replace(good, "[203.0.113.0/24]", "[2001:db8::/120]", 1) + "nextHopIPv6: 2001:db8:ff::2\nadvertisements: [{prefixes: [2001:db8::/120], aggregationLength: 129}]\n",
			"advertisements[0].aggregationLength"},
	}
	for name, tc := range cases {
		_, err := Parse([]byte(tc.yaml))
		if err == nil {
			t.Errorf("%s: Parse accepted invalid config", name)
			continue
		}
		if !strings.Contains(err.Error(), tc.wantField) {
			t.Errorf("%s: error %q does not name %q", name, err, tc.wantField)
		}
	}
	// No peer in the file: BGPPeers may supply them.
	if _, err := Parse([]byte(strings.Replace(good, "[{address: 198.18.0.1, asn: 64500}]", "[]", 1))); err != nil {
		t.Errorf("a config without peers refused: %v", err)
	}
	if _, err := Parse([]byte(good + "api: {enabled: true}\n")); err != nil {
		t.Errorf("api on the default loopback address refused: %v", err)
	}
}

func TestPasswordFile(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("s3cret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		file    string
		want    string
		wantErr string
	}{
		"trimmed":      {file: pwFile, want: "s3cret-value"},
		"missing file": {file: filepath.Join(dir, "absent"), wantErr: "peers[0].passwordFile"},
		"none":         {file: "", want: ""},
	}
	for name, tc := range cases {
		got, err := readPassword(0, PeerConfig{Address: "198.18.0.1", PasswordFile: tc.file})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error = %v, want one naming %s", name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: readPassword = %q, %v; want %q", name, got, err, tc.want)
		}
	}
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(empty, []byte("\n"), 0o600)
	if _, err := readPassword(0, PeerConfig{PasswordFile: empty}); err == nil {
		t.Error("empty password file accepted")
	}
}

// FuzzParse: Parse never panics, and whatever it accepts is valid.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("testdata/director.yaml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("localASN: 1\nrouterID: 1.2.3.4\nallowedPrefixes: [10.0.0.0/8]\npeers: [{address: 1.1.1.1, asn: 2}]\n"))
	f.Add([]byte("peers: [{address: '::1', asn: 4294967295, holdTimeSeconds: 65535}]"))
	f.Add([]byte("api: {enabled: true, address: '[::1]:1'}"))
	f.Add([]byte("{"))
	f.Add([]byte("localASN: 1\nrouterID: 1.2.3.4\nallowedPrefixes: [10.0.0.0/8]\ngracefulRestart: true\n" +
		"advertisements: [{prefixes: [10.1.0.0/16], communities: ['1:2'], largeCommunities: ['1:2:3'], localPreference: 5, aggregationLength: 24}]\n" +
		"peers: [{address: 1.1.1.1, asn: 2, nodeSelectors: [{matchExpressions: [{key: rack, operator: In, values: [a]}]}]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that does not validate: %v", err)
		}
		advs, errs := parseAdvertisements(c.Advertisements, c.allowedRanges(), advertisementField(c.Advertisements))
		if len(errs) != 0 {
			t.Fatalf("Parse accepted advertisements that do not parse: %v", errs)
		}
		// Every route an accepted advertisement makes stays allowed.
		for _, a := range advs {
			for p := range routes(advs, a.ranges) {
				if err := CheckAllowed(c.allowedRanges(), []netip.Prefix{p}); err != nil {
					t.Fatalf("advertisement %+v makes %s, not allowed: %v", a, p, err)
				}
			}
			if _, err := a.attrs.apiAttributes(); err != nil {
				t.Fatalf("attributes %+v do not encode: %v", a.attrs, err)
			}
		}
		for _, p := range c.Peers {
			Selects(p, map[string]string{"rack": "a"})
		}
	})
}
