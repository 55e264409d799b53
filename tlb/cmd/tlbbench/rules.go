package main

import (
	"fmt"
	"io"
	"net/netip"

	"github.com/tlbproject/tlb/tlb/model"
)

// benchModel returns vips TCP services on port 80, VIPs from
// 198.19.0.0/16 and real servers from 198.18.0.0/16 (the RFC 2544
// benchmarking range), real servers at even addresses, every service with the same realServers gateways,
// scheduler sched (empty: mh) with its default flags.
func benchModel(vips, realServers int, sched model.Scheduler) model.Desired {
	var d model.Desired
	for i := range vips {
		vip := netip.AddrFrom4([4]byte{198, 19, byte((i + 1) >> 8), byte((i + 1) & 0xff)})
		s := model.Service{VIP: vip, Protocol: model.TCP, Port: 80, Scheduler: sched}
		for j := range realServers {
			// Even last octets, so a new real server can sort in between.
			rs := netip.AddrFrom4([4]byte{198, 18, byte(1 + j/100), byte(2 + 2*(j%100))})
			s.RealServers = append(s.RealServers, model.RealServer{Addr: rs, Weight: 1})
		}
		d.Services = append(d.Services, s)
	}
	return d
}

// writeRestore writes d in `ipvsadm --restore` form: the same services,
// flags and tunnel real servers, added in the same order the director
// uses (reverse canonical), so both build identical tables.
func writeRestore(w io.Writer, d model.Desired) error {
	for _, s := range d.Sorted().Services {
		svc := fmt.Sprintf("%s:%d", s.VIP, s.Port)
		line := fmt.Sprintf("-A -t %s -s %s", svc, s.Scheduler)
		if flags := ipvsadmFlags(s.Flags); flags != "" {
			line += " -b " + flags
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
		rs := s.RealServers
		for i := len(rs) - 1; i >= 0; i-- {
			if _, err := fmt.Fprintf(w, "-a -t %s -r %s:%d -i -w %d\n", svc, rs[i].Addr, s.Port, rs[i].Weight); err != nil {
				return err
			}
		}
	}
	return nil
}

// ipvsadmFlags renders scheduler flags the way every ipvsadm with -b
// understands them (flag-1 is SCHED1, flag-2 is SCHED2).
func ipvsadmFlags(flags []model.Flag) string {
	bits := model.FlagBits(flags)
	out := ""
	add := func(s string) {
		if out != "" {
			out += ","
		}
		out += s
	}
	if bits&model.SvcFlagSched1 != 0 {
		add("flag-1")
	}
	if bits&model.SvcFlagSched2 != 0 {
		add("flag-2")
	}
	return out
}
