package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/tlbproject/tlb/netd"
	"github.com/tlbproject/tlb/netd/model"
)

// Names of the nftables objects netd owns.
const (
	// ClampTable is the inet table netd owns; it never touches any other.
	ClampTable = "tlb_netd"
	clampSet   = "vips"
	clampSet6  = "vips6"
	clampChain = "mss_clamp"
	tagPrefix  = "tlb-netd mss="
	tagPrefix6 = "tlb-netd mss6="
)

// Clamp maintains netd's nftables table, which lowers the MSS option of
// TCP SYN and SYN-ACK segments the node sends from its VIPs (and holds the
// port map, see portmap.go):
//
//	table inet tlb_netd {
//	  set vips { type ipv4_addr; elements = { ... } }
//	  set vips6 { type ipv6_addr; elements = { ... } }
//	  chain mss_clamp {
//	    type filter hook output priority mangle; policy accept;
//	    meta nfproto ipv4 meta l4proto tcp ip saddr @vips tcp flags & syn == syn
//	      tcp option maxseg size > MSS tcp option maxseg size set MSS
//	    meta nfproto ipv6 meta l4proto tcp ip6 saddr @vips6 tcp flags & syn == syn
//	      tcp option maxseg size > MSS6 tcp option maxseg size set MSS6
//	  }
//	}
//
// MSS6 is model.IPv6MSS(MSS): an IPv6 VIP's segments carry 40 bytes more
// of headers (inner and outer).
//
// The rule only rewrites an option that is larger than MSS; it drops
// nothing, so ICMP "fragmentation needed" and everything else pass.
type Clamp struct {
	ns netns.NsHandle
}

// NewClamp returns a Clamp working in the network namespace ns; pass
// netns.None() for the namespace of the calling process.
func NewClamp(ns netns.NsHandle) *Clamp { return &Clamp{ns: ns} }

var _ netd.MSSClamp = (*Clamp)(nil)

func (c *Clamp) conn() (*nftables.Conn, error) {
	var opts []nftables.ConnOption
	if c.ns != netns.None() {
		opts = append(opts, nftables.WithNetNSFd(int(c.ns)))
	}
	conn, err := nftables.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("open nftables netlink socket: %w", err)
	}
	return conn, nil
}

func table() *nftables.Table {
	return &nftables.Table{Name: ClampTable, Family: nftables.TableFamilyINet}
}

// State reads netd's table back. Any difference from the shape netd
// builds (a missing or extra chain, set or rule, another hook or key type)
// is reported as not Intact, so the reconciler rebuilds the table.
func (c *Clamp) State() (netd.ClampState, error) {
	conn, err := c.conn()
	if err != nil {
		return netd.ClampState{}, err
	}
	t, err := findTable(conn)
	if err != nil || t == nil {
		return netd.ClampState{}, err
	}
	clampCh, portCh, ok, err := readChains(conn)
	if err != nil || !ok {
		return netd.ClampState{}, err
	}
	var ports []model.PortMap
	if portCh != nil {
		if ports, ok, err = readPorts(conn, t, portCh); err != nil || !ok {
			return netd.ClampState{}, err
		}
	}
	set, set6, ok, err := readClampSets(conn, t)
	if err != nil || !ok {
		return netd.ClampState{}, err
	}
	mss, ok, err := readClampRules(conn, t, clampCh, set, set6)
	if err != nil || !ok {
		return netd.ClampState{}, err
	}
	vips, ok, err := readVIPs(conn, set, 4)
	if err != nil || !ok {
		return netd.ClampState{}, err
	}
	vips6, ok, err := readVIPs(conn, set6, 16)
	if err != nil || !ok {
		return netd.ClampState{}, err
	}
	return netd.ClampState{Intact: true, MSS: mss, VIPs: append(vips, vips6...), Ports: ports}, nil
}

// findTable returns netd's table, nil when there is none.
func findTable(conn *nftables.Conn) (*nftables.Table, error) {
	tables, err := conn.ListTablesOfFamily(nftables.TableFamilyINet)
	if err != nil {
		return nil, fmt.Errorf("list inet tables: %w", err)
	}
	var t *nftables.Table
	for _, x := range tables {
		if x.Name == ClampTable {
			t = x
		}
	}
	return t, nil
}

// readChains returns the MSS clamp chain and the port map's chain (nil
// when there is none) of netd's table. ok is false when the clamp chain
// is missing or a chain is foreign or misshapen.
func readChains(conn *nftables.Conn) (clampCh, portCh *nftables.Chain, ok bool, err error) {
	chains, err := conn.ListChainsOfTableFamily(nftables.TableFamilyINet)
	if err != nil {
		return nil, nil, false, fmt.Errorf("list chains of table %s: %w", ClampTable, err)
	}
	for _, ch := range chains {
		if ch.Table == nil || ch.Table.Name != ClampTable {
			continue
		}
		switch {
		case clampCh == nil && chainIntact(ch):
			clampCh = ch
		case portCh == nil && portChainIntact(ch):
			portCh = ch
		default:
			return nil, nil, false, nil // a foreign or misshapen chain in netd's table
		}
	}
	return clampCh, portCh, clampCh != nil, nil
}

// readClampSets returns the IPv4 and IPv6 VIP sets of table t; ok is
// false unless they are the table's only sets, of the right key types,
// neither interval nor map.
func readClampSets(conn *nftables.Conn, t *nftables.Table) (set, set6 *nftables.Set, ok bool, err error) {
	sets, err := conn.GetSets(t)
	if err != nil {
		return nil, nil, false, fmt.Errorf("list sets of table %s: %w", ClampTable, err)
	}
	for _, x := range sets {
		switch {
		case x.Interval || x.IsMap:
			return nil, nil, false, nil
		case x.Name == clampSet && x.KeyType.Name == nftables.TypeIPAddr.Name:
			set = x
		case x.Name == clampSet6 && x.KeyType.Name == nftables.TypeIP6Addr.Name:
			set6 = x
		default:
			return nil, nil, false, nil
		}
	}
	return set, set6, set != nil && set6 != nil, nil
}

// readClampRules returns the MSS the clamp chain's IPv4 rule sets, 0 when
// the chain is empty (the clamp is off); ok is false unless the chain
// holds no rule or the two rules, tagged, of the shapes clampExprs
// builds, the IPv6 one with model.IPv6MSS of the IPv4 one's MSS.
func readClampRules(conn *nftables.Conn, t *nftables.Table, ch *nftables.Chain, set, set6 *nftables.Set) (mss uint16, ok bool, err error) {
	rules, err := conn.GetRules(t, ch)
	if err != nil {
		return 0, false, fmt.Errorf("list rules of chain %s %s: %w", ClampTable, clampChain, err)
	}
	if len(rules) == 0 {
		return 0, true, nil // the clamp is off
	}
	if len(rules) != 2 {
		return 0, false, nil
	}
	mss, ok = parseTag(rules[0].UserData, tagPrefix)
	mss6, ok6 := parseTag(rules[1].UserData, tagPrefix6)
	if !ok || !ok6 || mss6 != model.IPv6MSS(mss) ||
		len(rules[0].Exprs) != len(clampExprs(set, mss, false)) || len(rules[1].Exprs) != len(clampExprs(set6, mss6, true)) {
		return 0, false, nil
	}
	return mss, true, nil
}

// readVIPs returns the addresses in a VIP set; ok is false when one is not
// of size bytes (4 for IPv4, 16 for IPv6).
func readVIPs(conn *nftables.Conn, set *nftables.Set, size int) (vips []netip.Addr, ok bool, err error) {
	elems, err := conn.GetSetElements(set)
	if err != nil {
		return nil, false, fmt.Errorf("list elements of set %s %s: %w", ClampTable, set.Name, err)
	}
	vips = make([]netip.Addr, 0, len(elems))
	for _, e := range elems {
		a, ok := netip.AddrFromSlice(e.Key)
		if !ok || len(e.Key) != size || a.Is4In6() {
			return nil, false, nil
		}
		vips = append(vips, a)
	}
	return vips, true, nil
}

func chainIntact(ch *nftables.Chain) bool {
	return ch.Name == clampChain && ch.Type == nftables.ChainTypeFilter &&
		ch.Hooknum != nil && *ch.Hooknum == *nftables.ChainHookOutput &&
		ch.Priority != nil && *ch.Priority == *nftables.ChainPriorityMangle &&
		(ch.Policy == nil || *ch.Policy == nftables.ChainPolicyAccept)
}

// Rebuild replaces netd's table in one atomic batch: the old table (if
// any) is deleted and the new one created in the same transaction, so no
// SYN-ACK ever sees a half-built table. mss 0 leaves the clamp chain
// empty (the clamp is off; the set stays, so VIP changes are the same). The port map's nat chain is
// created only when there are ports. Connections already redirected keep
// their translation (it lives in conntrack, not in the table).
func (c *Clamp) Rebuild(mss uint16, vips []netip.Addr, ports []model.PortMap) error {
	conn, err := c.conn()
	if err != nil {
		return err
	}
	tables, err := conn.ListTablesOfFamily(nftables.TableFamilyINet)
	if err != nil {
		return fmt.Errorf("list inet tables: %w", err)
	}
	for _, x := range tables {
		if x.Name == ClampTable {
			conn.DelTable(x)
		}
	}
	t := conn.AddTable(table())
	vips4, vips6 := byFamily(vips)
	set := &nftables.Set{Table: t, Name: clampSet, KeyType: nftables.TypeIPAddr}
	if err := conn.AddSet(set, elements(vips4)); err != nil {
		return fmt.Errorf("add set %s %s: %w", ClampTable, clampSet, err)
	}
	set6 := &nftables.Set{Table: t, Name: clampSet6, KeyType: nftables.TypeIP6Addr}
	if err := conn.AddSet(set6, elements(vips6)); err != nil {
		return fmt.Errorf("add set %s %s: %w", ClampTable, clampSet6, err)
	}
	accept := nftables.ChainPolicyAccept
	ch := conn.AddChain(&nftables.Chain{
		Name: clampChain, Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityMangle, Policy: &accept,
	})
	if mss != 0 {
		mss6 := model.IPv6MSS(mss)
		conn.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: clampExprs(set, mss, false), UserData: tag(tagPrefix, mss)})
		conn.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: clampExprs(set6, mss6, true), UserData: tag(tagPrefix6, mss6)})
	}
	if len(ports) > 0 {
		addPortChain(conn, t, ports)
	}
	if err := conn.Flush(); err != nil {
		if len(ports) > 0 && errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("replace table inet %s with %d port mappings (does the kernel have nft_nat and nft_chain_nat?): %w", ClampTable, len(ports), err)
		}
		return fmt.Errorf("replace table inet %s: %w", ClampTable, err)
	}
	return nil
}

// UpdateVIPs adds and removes set elements, IPv4 and IPv6, in one batch.
func (c *Clamp) UpdateVIPs(add, del []netip.Addr) error {
	conn, err := c.conn()
	if err != nil {
		return err
	}
	add4, add6 := byFamily(add)
	del4, del6 := byFamily(del)
	for _, u := range []struct {
		name     string
		add, del []netip.Addr
	}{{clampSet, add4, del4}, {clampSet6, add6, del6}} {
		if len(u.add)+len(u.del) == 0 {
			continue
		}
		set, err := conn.GetSetByName(table(), u.name)
		if err != nil {
			return fmt.Errorf("find set %s %s: %w", ClampTable, u.name, err)
		}
		if len(u.del) > 0 {
			if err := conn.SetDeleteElements(set, elements(u.del)); err != nil {
				return fmt.Errorf("delete %v from set %s %s: %w", u.del, ClampTable, u.name, err)
			}
		}
		if len(u.add) > 0 {
			if err := conn.SetAddElements(set, elements(u.add)); err != nil {
				return fmt.Errorf("add %v to set %s %s: %w", u.add, ClampTable, u.name, err)
			}
		}
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("update sets %s %s and %s (+%v -%v): %w", ClampTable, clampSet, clampSet6, add, del, err)
	}
	return nil
}

// byFamily splits vips into IPv4 and IPv6 addresses.
func byFamily(vips []netip.Addr) (v4, v6 []netip.Addr) {
	for _, v := range vips {
		if v.Is4() {
			v4 = append(v4, v)
		} else {
			v6 = append(v6, v)
		}
	}
	return v4, v6
}

// elements returns the set elements of vips, all of one family.
func elements(vips []netip.Addr) []nftables.SetElement {
	out := make([]nftables.SetElement, 0, len(vips))
	for _, v := range vips {
		out = append(out, nftables.SetElement{Key: v.AsSlice()})
	}
	return out
}

func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

// clampExprs builds the rule: TCP (over IPv6 when ipv6) from a VIP with
// SYN set and an MSS option above mss gets its MSS option rewritten to
// mss.
func clampExprs(set *nftables.Set, mss uint16, ipv6 bool) []expr.Any {
	const (
		tcpOptMaxseg = 2
		tcpFlagsOff  = 13
		tcpFlagSyn   = 0x02
	)
	// The source address's offset and length in the IPv4 or IPv6 header.
	proto, saddrOff, saddrLen := byte(unix.NFPROTO_IPV4), uint32(12), uint32(4)
	if ipv6 {
		proto, saddrOff, saddrLen = unix.NFPROTO_IPV6, 8, 16
	}
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: saddrOff, Len: saddrLen},
		&expr.Lookup{SourceRegister: 1, SetName: set.Name, SetID: set.ID},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: tcpFlagsOff, Len: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 1, Mask: []byte{tcpFlagSyn}, Xor: []byte{0}},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: []byte{0}},
		&expr.Exthdr{DestRegister: 1, Type: tcpOptMaxseg, Offset: 2, Len: 2, Op: expr.ExthdrOpTcpopt},
		&expr.Cmp{Op: expr.CmpOpGt, Register: 1, Data: be16(mss)},
		&expr.Immediate{Register: 1, Data: be16(mss)},
		&expr.Exthdr{SourceRegister: 1, Type: tcpOptMaxseg, Offset: 2, Len: 2, Op: expr.ExthdrOpTcpopt},
	}
}

// tag is a rule's comment, prefix (tagPrefix or tagPrefix6) and the MSS:
// it records the MSS so State can compare it.
func tag(prefix string, mss uint16) []byte {
	return userdata.AppendString(nil, userdata.TypeComment, prefix+strconv.Itoa(int(mss)))
}

func parseTag(ud []byte, prefix string) (uint16, bool) {
	s, ok := userdata.GetString(ud, userdata.TypeComment)
	if !ok || !strings.HasPrefix(s, prefix) {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(s, prefix), 10, 16)
	if err != nil {
		return 0, false
	}
	return uint16(n), true
}
