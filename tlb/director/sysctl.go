package director

import (
	"errors"
	"fmt"
	"strings"
)

// Sysctls reads and writes kernel parameters by their /proc/sys path
// relative to /proc/sys ("net/ipv4/vs/sloppy_tcp"). IPVS parameters are per
// network namespace.
type Sysctls interface {
	Get(name string) (string, error)
	Set(name, value string) error
}

// Sysctl is one kernel parameter the director sets, and why.
type Sysctl struct {
	Name  string
	Value string
	Why   string
}

// DirectorSysctls are the IPVS parameters a director sets in its network
// namespace (documented in docs/l4.md too).
var DirectorSysctls = []Sysctl{
	{"net/ipv4/vs/sloppy_tcp", "1",
		"schedule TCP packets of a connection whose SYN this director did not see; with the same Maglev table on " +
			"every director, a flow moved here by ECMP after another director's loss keeps its real server"},
	{"net/ipv4/vs/sloppy_sctp", "1",
		"the same for SCTP: schedule associations whose INIT this director did not see"},
	{"net/ipv4/vs/expire_nodest_conn", "1",
		"when a real server is deleted, expire its connection entries at their next packet instead of silently " +
			"dropping packets until the entry times out; a new SYN is scheduled afresh"},
	{"net/ipv4/vs/conntrack", "0",
		"tunnel (DSR) mode needs no netfilter connection tracking of IPVS connections; keeping it off saves a " +
			"conntrack entry per flow and avoids conntrack-table exhaustion under SYN floods"},
	{"net/ipv4/vs/schedule_icmp", "1",
		"schedule ICMP errors (e.g. fragmentation needed) about a flow this director has no entry for, by the " +
			"embedded packet's addresses, so with sloppy TCP and Maglev they reach the flow's real server and path MTU " +
			"discovery works after a failover"},
}

// ensureSysctls sets each of want whose current value differs. It returns
// the number of writes and every error, joined.
func ensureSysctls(sys Sysctls, want []Sysctl) (int, error) {
	if sys == nil {
		return 0, nil
	}
	writes := 0
	var errs []error
	for _, s := range want {
		cur, err := sys.Get(s.Name)
		if err == nil && strings.TrimSpace(cur) == s.Value {
			continue
		}
		writes++
		if err := sys.Set(s.Name, s.Value); err != nil {
			errs = append(errs, fmt.Errorf("set sysctl %s=%s: %w", s.Name, s.Value, err))
		}
	}
	return writes, errors.Join(errs...)
}

// CheckKernel returns an error unless the kernel has IPVS in this network
// namespace (the ip_vs module loaded). Without it, IPVS netlink requests
// fail or, worse, list nothing.
func CheckKernel(sys Sysctls) error {
	if _, err := sys.Get("net/ipv4/vs/sloppy_tcp"); err != nil {
		return fmt.Errorf("kernel IPVS not available (is the ip_vs module loaded?): %w", err)
	}
	return nil
}
