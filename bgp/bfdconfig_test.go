package bgp

import (
	"strings"
	"testing"
	"time"
)

const bfdBase = `
localASN: 64512
routerID: 198.18.0.2
allowedPrefixes: [203.0.113.0/24]
peers: [{address: 198.18.0.1, asn: 64500, bfd: BFD}]
`

func bfdYAML(bfd string) []byte { return []byte(strings.Replace(bfdBase, "BFD", bfd, 1)) }

func TestBFDDefaults(t *testing.T) {
	c, err := Parse(bfdYAML("{enabled: true}"))
	if err != nil {
		t.Fatal(err)
	}
	b := c.Peers[0].BFD
	if b.MinRxMilliseconds != 100 || b.MinTxMilliseconds != 100 || b.Multiplier != 5 {
		t.Errorf("defaulted bfd = %+v, want 100/100 ms x 5", b)
	}
	if tm := b.timing(); tm.DesiredMinTx != 100*time.Millisecond || tm.DetectMult != 5 {
		t.Errorf("timing %+v", tm)
	}
	off, err := Parse(bfdYAML("{}"))
	if err != nil || off.Peers[0].BFD != (BFDConfig{}) {
		t.Errorf("bfd off: %+v %v, want untouched", off.Peers[0].BFD, err)
	}
}

func TestBFDErrorsNameTheField(t *testing.T) {
	for name, tc := range map[string]struct{ bfd, field string }{
		"rx too fast":        {"{enabled: true, minRxMilliseconds: 5}", "peers[0].bfd.minRxMilliseconds"},
		"tx too slow":        {"{enabled: true, minTxMilliseconds: 20000}", "peers[0].bfd.minTxMilliseconds"},
		"multiplier 256":     {"{enabled: true, multiplier: 256}", "peers[0].bfd.multiplier"},
		"negative interval":  {"{enabled: true, minRxMilliseconds: -1}", "minRxMilliseconds"},
		"set while disabled": {"{multiplier: 3}", "peers[0].bfd.enabled"},
		"unknown field":      {"{enabled: true, interval: 3}", "interval"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(bfdYAML(tc.bfd))
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %v, want one naming %s", err, tc.field)
			}
		})
	}
	multihop := strings.Replace(string(bfdYAML("{enabled: true}")), "asn: 64500,", "asn: 64500, ebgpMultihopTTL: 2,", 1)
	if _, err := Parse([]byte(multihop)); err == nil || !strings.Contains(err.Error(), "peers[0].bfd.enabled") {
		t.Errorf("bfd with multihop: %v, want an error naming peers[0].bfd.enabled", err)
	}
}
