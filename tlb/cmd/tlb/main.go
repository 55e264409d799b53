// Command tlb is the L4 director: `tlb run --config FILE` programs kernel
// IPVS from a YAML file and keeps it in step with the file, probes the
// real servers (`health:`), announces the VIP ranges over BGP while ready
// (`bgp:`), and on SIGTERM withdraws, drains with IPVS in place and exits;
// `tlb status` prints what the kernel holds; `tlb drain NODE` and `tlb
// undrain NODE` take a gateway node out of service and back; `tlb console` serves the
// read-only operations page. main only wires; the logic lives in
// tlb/config, tlb/agent, tlb/director, tlb/health, bgp, tlb/status and
// internal/console.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/tlbproject/tlb/internal/buildinfo"
)

const usage = `usage:
  tlb run --config FILE [--log-level info] [--once]
  tlb status [--json] [--runtime-dir /run/tlb]
  tlb drain NODE | tlb undrain NODE [--kubeconfig FILE | --in-cluster]
  tlb --version
  tlb console [--listen 127.0.0.1:8480] [--kubeconfig FILE | --in-cluster]
              [--director NAME=URL]... [--netd NAME=URL]... [--l7 NAME=URL]... [--ipvs]
`

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		_, _ = fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return runCommand(args[1:], stdout, stderr)
	case "status":
		return statusCommand(args[1:], stdout, stderr)
	case "console":
		return consoleCommand(args[1:], stdout, stderr)
	case "drain", "undrain":
		return drainCommand(args[1:], args[0] == "drain", stdout, stderr)
	case "-h", "--help", "help":
		_, _ = fmt.Fprint(stdout, usage)
		return 0
	case "--version", "version":
		_, _ = fmt.Fprintln(stdout, buildinfo.Read("tlb"))
		return 0
	default:
		_, _ = fmt.Fprintf(stderr, "tlb: unknown command %q\n%s", args[0], usage)
		return 2
	}
}
