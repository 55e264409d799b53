// Command l7bench measures the L7 xDS server (make bench-l7): 2,000 and
// 10,000 services x 5 endpoints, 32 gateway streams held by real delta ADS
// clients, 100 endpoints changing at once. It re-runs itself with -child
// as the server, so the server's peak RSS is its own. It only wires flags;
// the logic is in l7/xdsbench.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xdsbench"
)

func main() {
	child := flag.Bool("child", false, "run as the server child (internal)")
	services := flag.Int("services", 0, "child: number of services")
	applyRounds := flag.Int("apply-rounds", 0, "child: start from the config these rounds lead to")
	grpcClients := flag.Bool("grpc-clients", false, "the server also builds the proxyless gRPC clients' resources (a gateway pod's l7 does not)")
	sizes := flag.String("sizes", "2000,10000", "service counts to measure")
	streams := flag.Int("streams", xdsbench.DefaultStreams, "gateway ADS streams")
	rounds := flag.String("rounds", "20,10", "rounds per size")
	cpuprofile := flag.String("server-cpuprofile", "", "write the server child's CPU profile to this file")
	flag.Parse()
	ctx := context.Background()
	if *child {
		if *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			if err == nil && pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
		if err := xdsbench.Child(ctx, *services, *applyRounds, kinds(*grpcClients), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "l7bench child:", err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "l7bench:", err)
		os.Exit(1)
	}
	ns, rs := strings.Split(*sizes, ","), strings.Split(*rounds, ",")
	var figs []xdsbench.Figures
	for i, s := range ns {
		n, err := strconv.Atoi(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "l7bench: bad -sizes:", err)
			os.Exit(2)
		}
		r := 10
		if i < len(rs) {
			r, _ = strconv.Atoi(rs[i])
		}
		fmt.Fprintf(os.Stderr, "l7bench: %d services, %d streams, %d rounds...\n", n, *streams, r)
		f, err := xdsbench.Measure(ctx, self, []string{"-child", "-services", s, "-server-cpuprofile", *cpuprofile, "-grpc-clients=" + strconv.FormatBool(*grpcClients)}, n, *streams, r)
		if err != nil {
			fmt.Fprintln(os.Stderr, "l7bench:", err)
			os.Exit(1)
		}
		figs = append(figs, f)
	}
	xdsbench.Report(os.Stdout, figs)
}

// kinds are the kinds of client the server child builds for.
func kinds(grpcClients bool) []translate.Kind {
	if grpcClients {
		return []translate.Kind{translate.Gateway, translate.GRPC}
	}
	return []translate.Kind{translate.Gateway}
}
