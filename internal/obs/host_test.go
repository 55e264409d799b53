package obs

import (
	"strings"
	"testing"
)

func TestOnHost(t *testing.T) {
	tests := map[string]struct {
		addr, host string
		want       string
		wantErr    string
	}{
		"no host keeps the file's address": {addr: "127.0.0.1:9100", want: "127.0.0.1:9100"},
		"node IPv4 keeps the port":         {addr: "127.0.0.1:9100", host: "198.18.1.2", want: "198.18.1.2:9100"},
		"node IPv6 is bracketed":           {addr: "[::1]:9101", host: "2001:db8::2", want: "[2001:db8::2]:9101"},
		"wildcard file address":            {addr: ":9101", host: "198.18.2.2", want: "198.18.2.2:9101"},
		"no listener stays off":            {addr: "", host: "198.18.1.2", want: ""},
		"host is a name":                   {addr: "127.0.0.1:9100", host: "node-1", wantErr: `metrics host "node-1" is not an IP address`},
		"unexpanded variable":              {addr: "127.0.0.1:9100", host: "$(NODE_IP)", wantErr: "not an IP address"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := OnHost(tc.addr, tc.host)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("OnHost(%q, %q) error = %v; want %q", tc.addr, tc.host, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("OnHost(%q, %q) = %q, %v; want %q", tc.addr, tc.host, got, err, tc.want)
			}
		})
	}
}
