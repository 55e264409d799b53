// Command demo runs TLB's demo inside the lab VM (see package demo); `make
// demo` boots the VM and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tlbproject/tlb/integration/demo"
)

func main() {
	bin := flag.String("bin", os.Getenv("TLB_BIN_DIR"), "directory holding the tlb and netd binaries")
	verbose := flag.Bool("v", false, "also show the daemons' logs")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := demo.Run(ctx, demo.Options{BinDir: *bin, Out: os.Stdout, Verbose: *verbose}); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}
