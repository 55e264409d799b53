package main

import (
	"encoding/binary"
	"fmt"
)

// CapNetBindService is CAP_NET_BIND_SERVICE (linux/capability.h): binding
// TCP and UDP ports below 1024.
const CapNetBindService = 10

// XattrCapability is the extended attribute that holds a file's
// capabilities, and paxXattrPrefix the PAX record prefix under which a tar
// stream carries an extended attribute (GNU tar, Go's archive/tar and
// containerd's unpacker read it).
const (
	XattrCapability = "security.capability"
	paxXattrPrefix  = "SCHILY.xattr."
)

// vfs_cap_data as the kernel reads it (linux/capability.h): revision 2,
// two 32-bit words of permitted and inheritable capabilities, and the
// flag that raises the effective set to the permitted one at exec.
const (
	vfsCapRevision2     = 0x02000000
	vfsCapFlagEffective = 0x000001
	vfsCapU32Revision2  = 2
)

// fileCapability is the value of security.capability that
// `setcap CAP,...=ep FILE` writes as root in the initial user namespace:
// each cap permitted, none inheritable, effective on. Revision 2 carries no
// root user ID (revision 3 does, for files set inside a user namespace), so
// it holds wherever the file is unpacked.
func fileCapability(caps ...uint) ([]byte, error) {
	if len(caps) == 0 {
		return nil, fmt.Errorf("file capability: no capability given")
	}
	var permitted [vfsCapU32Revision2]uint32
	for _, c := range caps {
		if c >= 32*vfsCapU32Revision2 {
			return nil, fmt.Errorf("file capability: capability %d is beyond the %d that revision 2 holds", c, 32*vfsCapU32Revision2)
		}
		permitted[c/32] |= 1 << (c % 32)
	}
	out := binary.LittleEndian.AppendUint32(nil, vfsCapRevision2|vfsCapFlagEffective)
	for _, p := range permitted {
		out = binary.LittleEndian.AppendUint32(out, p) // permitted
		out = binary.LittleEndian.AppendUint32(out, 0) // inheritable
	}
	return out, nil
}
