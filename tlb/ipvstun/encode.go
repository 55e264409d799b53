package ipvstun

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"

	"github.com/vishvananda/netlink/nl"
)

// Commands and attributes of the kernel's IPVS generic netlink family
// (include/uapi/linux/ip_vs.h).
const (
	cmdNewDest = 5 // IPVS_CMD_NEW_DEST
	cmdSetDest = 6 // IPVS_CMD_SET_DEST
	cmdGetDest = 8 // IPVS_CMD_GET_DEST

	cmdAttrService = 1 // IPVS_CMD_ATTR_SERVICE (nested)
	cmdAttrDest    = 2 // IPVS_CMD_ATTR_DEST (nested)

	svcAttrAF       = 1 // IPVS_SVC_ATTR_AF: u16
	svcAttrProtocol = 2 // IPVS_SVC_ATTR_PROTOCOL: u16
	svcAttrAddr     = 3 // IPVS_SVC_ATTR_ADDR: 4 or 16 bytes
	svcAttrPort     = 4 // IPVS_SVC_ATTR_PORT: be16

	destAttrAddr             = 1  // IPVS_DEST_ATTR_ADDR: 4 or 16 bytes
	destAttrPort             = 2  // IPVS_DEST_ATTR_PORT: be16
	destAttrFwdMethod        = 3  // IPVS_DEST_ATTR_FWD_METHOD: u32
	destAttrWeight           = 4  // IPVS_DEST_ATTR_WEIGHT: u32
	destAttrUThresh          = 5  // IPVS_DEST_ATTR_U_THRESH: u32
	destAttrLThresh          = 6  // IPVS_DEST_ATTR_L_THRESH: u32
	destAttrActive           = 7  // IPVS_DEST_ATTR_ACTIVE_CONNS: u32
	destAttrInactive         = 8  // IPVS_DEST_ATTR_INACT_CONNS: u32
	destAttrAF               = 11 // IPVS_DEST_ATTR_ADDR_FAMILY: u16
	destAttrTunType          = 13 // IPVS_DEST_ATTR_TUN_TYPE: u8
	destAttrTunPort          = 14 // IPVS_DEST_ATTR_TUN_PORT: be16
	destAttrTunFlags         = 15 // IPVS_DEST_ATTR_TUN_FLAGS: u16
	genlVersion              = 1  // IPVS_GENL_VERSION
	fwdMask           uint32 = 0x0007
)

// Type is a real server's tunnel type (IP_VS_CONN_F_TUNNEL_TYPE_*).
type Type uint8

// Tunnel types the kernel knows.
const (
	IPIP Type = 0
	GUE  Type = 1
	GRE  Type = 2
)

// Flags of a GUE or GRE tunnel (IP_VS_TUNNEL_ENCAP_FLAG_*). 0 sends GUE
// without a UDP checksum.
const (
	FlagCSum    uint16 = 1 << 0
	FlagRemCSum uint16 = 1 << 1
)

// Tunnel is a real server's encapsulation as the kernel holds it.
type Tunnel struct {
	Type Type
	// Port is the UDP destination port of GUE (0 for IPIP).
	Port  uint16
	Flags uint16
}

// Service identifies an IPVS virtual service (not a firewall-mark one).
type Service struct {
	Protocol uint16
	Addr     netip.AddrPort
}

// Dest is one real server: what the kernel needs to add or change it and
// what it reports when listing it.
type Dest struct {
	Addr netip.AddrPort
	// Fwd is the forwarding method (IP_VS_CONN_F_TUNNEL is 2).
	Fwd    uint32
	Weight uint32
	Tunnel Tunnel
	// ActiveConns and InactiveConns are reported by the kernel; never
	// written.
	ActiveConns, InactiveConns uint32
}

func family(a netip.Addr) uint16 {
	if a.Is4() {
		return syscall.AF_INET
	}
	return syscall.AF_INET6
}

func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

// serviceAttr is the nested IPVS_CMD_ATTR_SERVICE naming svc.
func serviceAttr(svc Service) *nl.RtAttr {
	a := nl.NewRtAttr(cmdAttrService, nil)
	a.AddRtAttr(svcAttrAF, nl.Uint16Attr(family(svc.Addr.Addr())))
	a.AddRtAttr(svcAttrProtocol, nl.Uint16Attr(svc.Protocol))
	a.AddRtAttr(svcAttrAddr, svc.Addr.Addr().AsSlice())
	a.AddRtAttr(svcAttrPort, be16(svc.Addr.Port()))
	return a
}

// destAttr is the nested IPVS_CMD_ATTR_DEST carrying every field the
// kernel needs for a full entry, the tunnel attributes included: the
// kernel zeroes what a write leaves out, so a write without them would
// turn a GUE real server back into IPIP.
func destAttr(d Dest) *nl.RtAttr {
	a := nl.NewRtAttr(cmdAttrDest, nil)
	a.AddRtAttr(destAttrAF, nl.Uint16Attr(family(d.Addr.Addr())))
	a.AddRtAttr(destAttrAddr, d.Addr.Addr().AsSlice())
	a.AddRtAttr(destAttrPort, be16(d.Addr.Port()))
	a.AddRtAttr(destAttrFwdMethod, nl.Uint32Attr(d.Fwd&fwdMask))
	a.AddRtAttr(destAttrWeight, nl.Uint32Attr(d.Weight))
	a.AddRtAttr(destAttrUThresh, nl.Uint32Attr(0))
	a.AddRtAttr(destAttrLThresh, nl.Uint32Attr(0))
	a.AddRtAttr(destAttrTunType, nl.Uint8Attr(uint8(d.Tunnel.Type)))
	a.AddRtAttr(destAttrTunPort, be16(d.Tunnel.Port))
	a.AddRtAttr(destAttrTunFlags, nl.Uint16Attr(d.Tunnel.Flags))
	return a
}

// encodeDest returns the generic netlink payload (after the netlink
// header) of an add (update false) or change of d in svc.
func encodeDest(svc Service, d Dest, update bool) []byte {
	cmd := uint8(cmdNewDest)
	if update {
		cmd = cmdSetDest
	}
	out := (&nl.Genlmsg{Command: cmd, Version: genlVersion}).Serialize()
	out = append(out, serviceAttr(svc).Serialize()...)
	return append(out, destAttr(d).Serialize()...)
}

// encodeList returns the payload of a dump of svc's real servers.
func encodeList(svc Service) []byte {
	out := (&nl.Genlmsg{Command: cmdGetDest, Version: genlVersion}).Serialize()
	return append(out, serviceAttr(svc).Serialize()...)
}

// parseDest reads one message of a real-server dump (the generic netlink
// header first). Attributes it does not know (statistics, ...) are
// skipped.
func parseDest(msg []byte) (Dest, error) {
	if len(msg) < nl.SizeofGenlmsg {
		return Dest{}, fmt.Errorf("real-server message of %d bytes is shorter than its header", len(msg))
	}
	outer, err := nl.ParseRouteAttr(msg[nl.SizeofGenlmsg:])
	if err != nil {
		return Dest{}, fmt.Errorf("parse real-server message: %w", err)
	}
	for _, a := range outer {
		if a.Attr.Type&^syscall.NLA_F_NESTED == cmdAttrDest {
			return parseDestAttrs(a.Value)
		}
	}
	return Dest{}, errors.New("real-server message without IPVS_CMD_ATTR_DEST")
}

func parseDestAttrs(b []byte) (Dest, error) {
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		return Dest{}, fmt.Errorf("parse real-server attributes: %w", err)
	}
	var d Dest
	var raw []byte
	var port uint16
	native := nl.NativeEndian()
	for _, a := range attrs {
		v := a.Value
		switch {
		case a.Attr.Type == destAttrAddr:
			raw = v
		case a.Attr.Type == destAttrPort && len(v) >= 2:
			port = binary.BigEndian.Uint16(v)
		case a.Attr.Type == destAttrFwdMethod && len(v) >= 4:
			d.Fwd = native.Uint32(v) & fwdMask
		case a.Attr.Type == destAttrWeight && len(v) >= 4:
			d.Weight = native.Uint32(v)
		case a.Attr.Type == destAttrActive && len(v) >= 4:
			d.ActiveConns = native.Uint32(v)
		case a.Attr.Type == destAttrInactive && len(v) >= 4:
			d.InactiveConns = native.Uint32(v)
		case a.Attr.Type == destAttrTunType && len(v) >= 1:
			d.Tunnel.Type = Type(v[0])
		case a.Attr.Type == destAttrTunPort && len(v) >= 2:
			d.Tunnel.Port = binary.BigEndian.Uint16(v)
		case a.Attr.Type == destAttrTunFlags && len(v) >= 2:
			d.Tunnel.Flags = native.Uint16(v)
		}
	}
	addr, err := parseAddr(raw, attrs)
	if err != nil {
		return Dest{}, err
	}
	d.Addr = netip.AddrPortFrom(addr, port)
	return d, nil
}

// parseAddr reads the real server's address: the kernel always sends 16
// bytes (union nf_inet_addr); the address family says how many count.
func parseAddr(raw []byte, attrs []syscall.NetlinkRouteAttr) (netip.Addr, error) {
	af := uint16(syscall.AF_INET)
	for _, a := range attrs {
		if a.Attr.Type == destAttrAF && len(a.Value) >= 2 {
			af = nl.NativeEndian().Uint16(a.Value)
		}
	}
	switch {
	case af == syscall.AF_INET && len(raw) >= 4:
		return netip.AddrFrom4([4]byte(raw[:4])), nil
	case af == syscall.AF_INET6 && len(raw) >= 16:
		return netip.AddrFrom16([16]byte(raw[:16])), nil
	}
	return netip.Addr{}, fmt.Errorf("real server without a usable address (family %d, %d bytes)", af, len(raw))
}
