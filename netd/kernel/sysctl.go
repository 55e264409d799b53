package kernel

import "github.com/tlbproject/tlb/internal/procsys"

// ProcSys reads and writes sysctls as files under a /proc/sys root
// (internal/procsys). The net.* keys it sees belong to the network
// namespace of the calling process.
type ProcSys = procsys.ProcSys
