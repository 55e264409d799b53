package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/config"
	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/status"
)

func statusCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tlb status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	runtimeDir := fs.String("runtime-dir", config.DefaultRuntimeDir, "directory of the director's ownership record")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := printStatus(stdout, *runtimeDir, *asJSON); err != nil {
		_, _ = fmt.Fprintf(stderr, "tlb status: %v\n", err)
		return 1
	}
	return 0
}

func printStatus(w io.Writer, runtimeDir string, asJSON bool) error {
	rec, err := director.LoadRecord(runtimeDir)
	if err != nil {
		return err
	}
	if err := director.CheckKernel(director.ProcSys{}); err != nil {
		return err
	}
	h, err := ipvs.New("")
	if err != nil {
		return fmt.Errorf("open IPVS netlink socket: %w", err)
	}
	defer h.Close()
	svcs, err := status.Read(h, rec.Owns)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(svcs)
	}
	return status.WriteTable(w, svcs)
}
