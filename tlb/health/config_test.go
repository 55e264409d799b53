package health

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	c, err := Parse([]byte("kind: http\nport: 8081\ninterval: 500ms\ntimeout: 200ms\nannounce: vips\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != DefaultPath || c.Rise != DefaultRise || c.Fall != DefaultFall || c.Interval != 500*time.Millisecond {
		t.Errorf("defaults: %+v", c)
	}
	if _, err := Parse([]byte(`{"port": 8081}`)); err != nil {
		t.Errorf("JSON section (as the director config passes it) refused: %v", err)
	}
	cases := map[string]struct{ yaml, field string }{
		"no port":            {"kind: tcp\n", "port"},
		"bad kind":           {"kind: icmp\nport: 1\n", "kind"},
		"path on tcp":        {"port: 1\npath: /x\n", "path"},
		"relative path":      {"kind: http\nport: 1\npath: healthz\n", "path"},
		"timeout > interval": {"port: 1\ninterval: 1s\ntimeout: 2s\n", "timeout"},
		"bad duration":       {"port: 1\ninterval: soon\n", "interval"},
		"numeric duration":   {"port: 1\ninterval: 5\n", "interval"},
		"zero rise":          {"port: 1\nrise: -1\n", "rise"},
		"bad announce":       {"port: 1\nannounce: all\n", "announce"},
		"unknown field":      {"port: 1\nretries: 3\n", "retries"},
	}
	for name, tc := range cases {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error = %v, want one naming %q", name, err, tc.field)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts validates.
func FuzzParse(f *testing.F) {
	f.Add([]byte("kind: http\nport: 8081\npath: /healthz\ninterval: 1s\ntimeout: 500ms\nrise: 2\nfall: 3\nannounce: vips\n"))
	f.Add([]byte(`{"port": 1, "interval": "-1s"}`))
	f.Add([]byte("port: 65535\ntimeout: 1ns\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted invalid config: %v", err)
		}
		_ = NewProber(c, nil)
	})
}
