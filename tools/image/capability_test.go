package main

import (
	"encoding/hex"
	"strings"
	"testing"
)

// TestFileCapability holds the bytes to what setcap wrote on a scratch
// file of a Debian 12 machine (libcap2-bin 2.66), read back with
// getxattr(2): `setcap cap_net_bind_service=ep F` gave
// 0100000200040000000000000000000000000000. make image-test compares with
// a live setcap run too (TestBuiltEnvoyImage).
func TestFileCapability(t *testing.T) {
	tests := map[string]struct {
		caps    []uint
		want    string
		wantErr string
	}{
		"net_bind_service=ep": {caps: []uint{CapNetBindService}, want: "0100000200040000000000000000000000000000"},
		// cap_chown (0) and cap_sys_admin (21) in the first word,
		// cap_bpf (39) in the second.
		"three caps":   {caps: []uint{0, 21, 39}, want: "0100000201002000000000008000000000000000"},
		"none":         {caps: nil, wantErr: "no capability given"},
		"out of range": {caps: []uint{64}, wantErr: "capability 64 is beyond the 64"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := fileCapability(tc.caps...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("fileCapability(%v) error = %v; want %q", tc.caps, err, tc.wantErr)
				}
				return
			}
			if err != nil || hex.EncodeToString(got) != tc.want {
				t.Errorf("fileCapability(%v) = %x, %v; want %s", tc.caps, got, err, tc.want)
			}
		})
	}
}
