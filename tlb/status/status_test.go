package status

import (
	"bytes"
	"encoding/json"
	"flag"
	"net"
	"os"
	"testing"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/model"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

type lister struct {
	svcs  []*ipvs.Service
	dests map[uint16][]*ipvs.Destination // by service port
}

func (l lister) GetServices() ([]*ipvs.Service, error) { return l.svcs, nil }
func (l lister) GetDestinations(s *ipvs.Service) ([]*ipvs.Destination, error) {
	return l.dests[s.Port], nil
}

func TestReadAndRender(t *testing.T) {
	l := lister{
		svcs: []*ipvs.Service{
			{Address: net.ParseIP("203.0.113.99").To4(), Protocol: 6, Port: 443, SchedName: "wrr", Flags: 0x2},
			{Address: net.ParseIP("203.0.113.10").To4(), Protocol: 6, Port: 80, SchedName: "mh", Flags: 0x2 | 0x8 | 0x10},
			{Address: net.ParseIP("203.0.113.10").To4(), Protocol: 17, Port: 53, SchedName: "mh", Flags: 0x2 | 0x8},
			{Address: net.ParseIP("203.0.113.10").To4(), Protocol: 6, Port: 8080, SchedName: "mh", Flags: 0x2 | 0x8 | 0x10},
		},
		dests: map[uint16][]*ipvs.Destination{
			80: {
				{Address: net.ParseIP("198.18.2.2").To4(), Port: 80, Weight: 1, ConnectionFlags: ipvs.ConnFwdTunnel, ActiveConnections: 7, InactiveConnections: 2},
				{Address: net.ParseIP("198.18.2.3").To4(), Port: 80, Weight: 0, ConnectionFlags: ipvs.ConnFwdTunnel, ActiveConnections: 1},
			},
			8080: { // churned: not in canonical order
				{Address: net.ParseIP("198.18.2.3").To4(), Port: 8080, Weight: 1, ConnectionFlags: ipvs.ConnFwdTunnel},
				{Address: net.ParseIP("198.18.2.2").To4(), Port: 8080, Weight: 1, ConnectionFlags: ipvs.ConnFwdTunnel},
			},
			443: {{Address: net.ParseIP("10.1.1.1").To4(), Port: 443, Weight: 5, ConnectionFlags: ipvs.ConnFwdMasq}},
		},
	}
	owned := func(k model.Key) bool { return k.VIP.String() == "203.0.113.10" }
	svcs, err := Read(l, owned)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, svcs); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("\n")
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(svcs); err != nil {
		t.Fatal(err)
	}
	golden := "testdata/status.golden"
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if buf.String() != string(want) {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
