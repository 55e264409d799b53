package health

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// TestGTMHandlerIPv6: GTM answers for IPv6 VIPs in their canonical form
// and the spellings a DNS GTM may send (upper case, zeros written out,
// brackets), lists them after the IPv4 VIPs, and refuses a zone.
func TestGTMHandlerIPv6(t *testing.T) {
	v6up, v6down := netip.MustParseAddr("2001:db8::10"), netip.MustParseAddr("2001:db8::20")
	g := NewGTM()
	g.SetHealth(Evaluate(VIPTable{vip1: {gw1}, v6up: {gw1, gw2}, v6down: {gw3}}, upSet{gw1: true}, nil))
	srv := httptest.NewServer(g)
	defer srv.Close()
	cases := map[string]gtmAnswer{
		"healthy IPv6 vip":        {"/vip/2001:db8::10", 200, "2001:db8::10 up healthy=1 total=2"},
		"dead IPv6 vip":           {"/vip/2001:db8::20", 503, "2001:db8::20 down healthy=0 total=1: no healthy gateway"},
		"long form":               {"/vip/2001:0DB8:0000:0000:0000:0000:0000:0010", 200, "2001:db8::10 up"},
		"brackets":                {"/vip/[2001:db8::10]", 200, "2001:db8::10 up"},
		"unknown IPv6 vip":        {"/vip/2001:db8::99", 404, "unknown VIP 2001:db8::99"},
		"zone":                    {"/vip/fe80::1%25eth0", 400, "bad VIP"},
		"list, IPv4 then IPv6":    {"/vip/", 200, "203.0.113.10 up healthy=1 total=1\n2001:db8::10 up healthy=1 total=2\n2001:db8::20 down"},
		"IPv4 still answered too": {"/vip/203.0.113.10", 200, "203.0.113.10 up"},
	}
	checkGTMAnswers(t, srv.URL, cases)
}
