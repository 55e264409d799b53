package kernel

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
	"golang.org/x/sys/unix"

	"github.com/tlbproject/tlb/netd/model"
)

// The port map lives in netd's table as a nat chain, only when there are
// mappings (a nat chain makes the kernel track every connection):
//
//	chain port_map {
//	  type nat hook prerouting priority dstnat; policy accept;
//	  meta nfproto ipv4 ip daddr 203.0.113.10 meta l4proto tcp tcp dport 443
//	    dnat ip to 203.0.113.10:10443 comment "tlb-netd port tcp 203.0.113.10:443->10443"
//	}
//
// DNAT keeps the destination address (a VIP) and changes only the port,
// so the reply leaves from the VIP, and the clamp in the output hook,
// which matches on the source address, still sees it (conntrack restores
// the external source port later, in postrouting).
const (
	portChain     = "port_map"
	portTagPrefix = "tlb-netd port "
)

func portChainIntact(ch *nftables.Chain) bool {
	return ch.Name == portChain && ch.Type == nftables.ChainTypeNAT &&
		ch.Hooknum != nil && *ch.Hooknum == *nftables.ChainHookPrerouting &&
		ch.Priority != nil && *ch.Priority == *nftables.ChainPriorityNATDest &&
		(ch.Policy == nil || *ch.Policy == nftables.ChainPolicyAccept)
}

// addPortChain adds the nat chain and one rule per mapping to the batch.
func addPortChain(conn *nftables.Conn, t *nftables.Table, ports []model.PortMap) {
	accept := nftables.ChainPolicyAccept
	ch := conn.AddChain(&nftables.Chain{
		Name: portChain, Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityNATDest, Policy: &accept,
	})
	for _, m := range ports {
		conn.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: portExprs(m), UserData: portTag(m)})
	}
}

// readPorts reads the mappings back from the chain's rules. ok is false
// when a rule is not exactly one netd builds for the mapping its comment
// names, or a mapping repeats.
func readPorts(conn *nftables.Conn, t *nftables.Table, ch *nftables.Chain) (ports []model.PortMap, ok bool, err error) {
	rules, err := conn.GetRules(t, ch)
	if err != nil {
		return nil, false, fmt.Errorf("list rules of chain %s %s: %w", ClampTable, portChain, err)
	}
	if len(rules) == 0 {
		return nil, false, nil // netd never builds an empty nat chain
	}
	seen := make(map[model.PortMap]bool, len(rules))
	for _, r := range rules {
		m, ok := parsePortTag(r.UserData)
		if !ok || seen[m] || !reflect.DeepEqual(r.Exprs, portExprs(m)) {
			return nil, false, nil
		}
		seen[m] = true
		ports = append(ports, m)
	}
	return model.SortPortMaps(ports), true, nil
}

// portExprs builds the rule: IPv4 TCP to VIP:Port is DNATed to
// VIP:TargetPort.
func portExprs(m model.PortMap) []expr.Any {
	const (
		ipDaddrOff  = 16
		tcpDportOff = 2
	)
	vip := m.VIP.As4()
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: ipDaddrOff, Len: 4},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: vip[:]},
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: tcpDportOff, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binary.BigEndian.AppendUint16(nil, m.Port)},
		&expr.Immediate{Register: 1, Data: vip[:]},
		&expr.Immediate{Register: 2, Data: binary.BigEndian.AppendUint16(nil, m.TargetPort)},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: unix.NFPROTO_IPV4,
			RegAddrMin: 1, RegAddrMax: 1, RegProtoMin: 2, RegProtoMax: 2, Specified: true},
	}
}

// portTag is the rule's comment; it records the mapping so State can
// rebuild it and compare the rule with the one netd would write.
func portTag(m model.PortMap) []byte {
	return userdata.AppendString(nil, userdata.TypeComment, portTagPrefix+m.String())
}

// parsePortTag reads "tlb-netd port tcp 203.0.113.10:443->10443".
func parsePortTag(ud []byte) (model.PortMap, bool) {
	s, ok := userdata.GetString(ud, userdata.TypeComment)
	if !ok || !strings.HasPrefix(s, portTagPrefix) {
		return model.PortMap{}, false
	}
	proto, rest, ok := strings.Cut(strings.TrimPrefix(s, portTagPrefix), " ")
	if !ok || proto != model.ProtocolTCP {
		return model.PortMap{}, false
	}
	from, to, ok := strings.Cut(rest, "->")
	if !ok {
		return model.PortMap{}, false
	}
	ap, err := netip.ParseAddrPort(from)
	if err != nil || !ap.Addr().Is4() {
		return model.PortMap{}, false
	}
	target, err := strconv.ParseUint(to, 10, 16)
	if err != nil {
		return model.PortMap{}, false
	}
	return model.PortMap{VIP: ap.Addr(), Protocol: proto, Port: ap.Port(), TargetPort: uint16(target)}, true
}
