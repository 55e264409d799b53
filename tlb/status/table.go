package status

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes svcs as a table, one line per real server under its
// service, in the kernel's list order. A table-hashing service (mh, sh,
// dh) whose list is not in canonical order is marked, since its table
// differs from a fresh director's.
func WriteTable(w io.Writer, svcs []Service) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "SERVICE\tSCHEDULER\tOWNER\tREAL SERVER\tWEIGHT\tFORWARDING\tACTIVE\tINACTIVE")
	for _, s := range svcs {
		name := fmt.Sprintf("%s:%d/%s", bracket(s.VIP), s.Port, s.Protocol)
		if s.FWMark != 0 {
			name = fmt.Sprintf("fwmark %d", s.FWMark)
		}
		sched := s.Scheduler
		if len(s.Flags) > 0 {
			sched += " (" + strings.Join(s.Flags, ",") + ")"
		}
		owner := "foreign"
		if s.Owned {
			owner = "tlb"
		}
		if !s.CanonicalOrder && (s.Scheduler == "mh" || s.Scheduler == "sh" || s.Scheduler == "dh") {
			sched += " [not canonical order]"
		}
		if len(s.RealServers) == 0 {
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t-\t\t\t\t\n", name, sched, owner)
			continue
		}
		for i, rs := range s.RealServers {
			if i > 0 {
				name, sched, owner = "", "", ""
			}
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%d\n", name, sched, owner, bracket(rs.Address), rs.Weight, rs.Forwarding,
				rs.ActiveConnections, rs.InactiveConns)
		}
	}
	if len(svcs) == 0 {
		_, _ = fmt.Fprintln(tw, "(no IPVS services)")
	}
	return tw.Flush()
}

func bracket(addr string) string {
	if strings.Contains(addr, ":") {
		return "[" + addr + "]"
	}
	return addr
}
