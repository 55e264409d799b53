//go:build !lab

package bgp_test

import (
	"net"
	"testing"
	"time"

	"github.com/tlbproject/tlb/bgp"
)

// TestNothingListensByDefault: with the default config a director only
// dials out: no BGP listener, no GoBGP API. With the API on, it is on
// loopback only.
func TestNothingListensByDefault(t *testing.T) {
	l := needLab(t)
	r := startRouter(t, l, neighbors(l, 2))
	startSpeaker(t, speakerConfig(l, 0))
	waitEstablished(t, r, director(0), 20*time.Second)
	for _, addr := range []string{l.DirectorAddrs[0] + ":179", "127.0.0.1:179", "127.0.0.1:50051"} {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("something listens on %s with the default config", addr)
		}
	}

	cfg := speakerConfig(l, 1)
	cfg.API = bgp.APIConfig{Enabled: true} // default address
	startSpeaker(t, cfg)
	waitEstablished(t, r, director(1), 20*time.Second)
	var c net.Conn
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err = net.DialTimeout("tcp", bgp.DefaultAPIAddress, time.Second); err == nil {
			c.Close()
			break
		}
	}
	if err != nil {
		t.Errorf("API enabled but nothing on %s: %v", bgp.DefaultAPIAddress, err)
	}
	if c, err := net.DialTimeout("tcp", l.DirectorAddrs[1]+":50051", time.Second); err == nil {
		c.Close()
		t.Errorf("the GoBGP API answers on %s, want loopback only", l.DirectorAddrs[1])
	}
}
