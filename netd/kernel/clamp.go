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
	clampChain = "mss_clamp"
	tagPrefix  = "tlb-netd mss="
)

// Clamp maintains netd's nftables table, which lowers the MSS option of
// TCP SYN and SYN-ACK segments the node sends from its VIPs (and holds the
// port map, see portmap.go):
//
//	table inet tlb_netd {
//	  set vips { type ipv4_addr; elements = { ... } }
//	  chain mss_clamp {
//	    type filter hook output priority mangle; policy accept;
//	    meta nfproto ipv4 meta l4proto tcp ip saddr @vips tcp flags & syn == syn
//	      tcp option maxseg size > MSS tcp option maxseg size set MSS
//	  }
//	}
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
	set, ok, err := readClampSet(conn, t)
	if err != nil || !ok {
		return netd.ClampState{}, err
	}
	mss, ok, err := readClampRule(conn, t, clampCh, set)
	if err != nil || !ok {
		return netd.ClampState{}, err
	}
	vips, ok, err := readVIPs(conn, set)
	if err != nil || !ok {
		return netd.ClampState{}, err
	}
	return netd.ClampState{Intact: true, MSS: mss, VIPs: vips, Ports: ports}, nil
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

// readClampSet returns the VIP set of table t; ok is false unless it is
// the table's only set, of IPv4 addresses, neither interval nor map.
func readClampSet(conn *nftables.Conn, t *nftables.Table) (set *nftables.Set, ok bool, err error) {
	sets, err := conn.GetSets(t)
	if err != nil {
		return nil, false, fmt.Errorf("list sets of table %s: %w", ClampTable, err)
	}
	if len(sets) != 1 || sets[0].Name != clampSet || sets[0].KeyType.Name != nftables.TypeIPAddr.Name ||
		sets[0].Interval || sets[0].IsMap {
		return nil, false, nil
	}
	return sets[0], true, nil
}

// readClampRule returns the MSS the clamp chain's rule sets, 0 when the
// chain is empty (the clamp is off); ok is false unless the chain holds
// no rule or that one rule, tagged, of the shape clampExprs builds.
func readClampRule(conn *nftables.Conn, t *nftables.Table, ch *nftables.Chain, set *nftables.Set) (mss uint16, ok bool, err error) {
	rules, err := conn.GetRules(t, ch)
	if err != nil {
		return 0, false, fmt.Errorf("list rules of chain %s %s: %w", ClampTable, clampChain, err)
	}
	if len(rules) == 0 {
		return 0, true, nil // the clamp is off
	}
	if len(rules) != 1 {
		return 0, false, nil
	}
	mss, ok = parseTag(rules[0].UserData)
	if !ok || len(rules[0].Exprs) != len(clampExprs(set, mss)) {
		return 0, false, nil
	}
	return mss, true, nil
}

// readVIPs returns the addresses in the VIP set; ok is false when one is
// not IPv4.
func readVIPs(conn *nftables.Conn, set *nftables.Set) (vips []netip.Addr, ok bool, err error) {
	elems, err := conn.GetSetElements(set)
	if err != nil {
		return nil, false, fmt.Errorf("list elements of set %s %s: %w", ClampTable, clampSet, err)
	}
	vips = make([]netip.Addr, 0, len(elems))
	for _, e := range elems {
		a, ok := netip.AddrFromSlice(e.Key)
		if !ok || !a.Is4() {
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
	set := &nftables.Set{Table: t, Name: clampSet, KeyType: nftables.TypeIPAddr}
	if err := conn.AddSet(set, elements(vips)); err != nil {
		return fmt.Errorf("add set %s %s: %w", ClampTable, clampSet, err)
	}
	accept := nftables.ChainPolicyAccept
	ch := conn.AddChain(&nftables.Chain{
		Name: clampChain, Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityMangle, Policy: &accept,
	})
	if mss != 0 {
		conn.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: clampExprs(set, mss), UserData: tag(mss)})
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

// UpdateVIPs adds and removes set elements in one batch.
func (c *Clamp) UpdateVIPs(add, del []netip.Addr) error {
	conn, err := c.conn()
	if err != nil {
		return err
	}
	set, err := conn.GetSetByName(table(), clampSet)
	if err != nil {
		return fmt.Errorf("find set %s %s: %w", ClampTable, clampSet, err)
	}
	if len(del) > 0 {
		if err := conn.SetDeleteElements(set, elements(del)); err != nil {
			return fmt.Errorf("delete %v from set %s %s: %w", del, ClampTable, clampSet, err)
		}
	}
	if len(add) > 0 {
		if err := conn.SetAddElements(set, elements(add)); err != nil {
			return fmt.Errorf("add %v to set %s %s: %w", add, ClampTable, clampSet, err)
		}
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("update set %s %s (+%v -%v): %w", ClampTable, clampSet, add, del, err)
	}
	return nil
}

func elements(vips []netip.Addr) []nftables.SetElement {
	out := make([]nftables.SetElement, 0, len(vips))
	for _, v := range vips {
		b := v.As4()
		out = append(out, nftables.SetElement{Key: b[:]})
	}
	return out
}

func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

// clampExprs builds the rule: IPv4 TCP from a VIP with SYN set and an MSS
// option above mss gets its MSS option rewritten to mss.
func clampExprs(set *nftables.Set, mss uint16) []expr.Any {
	const (
		tcpOptMaxseg = 2
		tcpFlagsOff  = 13
		tcpFlagSyn   = 0x02
		ipSaddrOff   = 12
	)
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: ipSaddrOff, Len: 4},
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

// tag is the rule's comment; it records the MSS so State can compare it.
func tag(mss uint16) []byte {
	return userdata.AppendString(nil, userdata.TypeComment, tagPrefix+strconv.Itoa(int(mss)))
}

func parseTag(ud []byte) (uint16, bool) {
	s, ok := userdata.GetString(ud, userdata.TypeComment)
	if !ok || !strings.HasPrefix(s, tagPrefix) {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(s, tagPrefix), 10, 16)
	if err != nil {
		return 0, false
	}
	return uint16(n), true
}
