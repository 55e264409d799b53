// Command labrun boots the lab VM (Debian's kernel under qemu, host root over
// 9p) and runs one command inside it as root, streaming its output and
// exiting with its status.
//
//	labrun [-mem MiB] [-cpus N] [-timeout D] [-env K=V]... [-C dir] [-artifacts dir] -- cmd [args...]
//
// With -artifacts, the files tests print as TLB-ARTIFACT lines (a
// screenshot, say: the VM cannot write to the host) are saved as
// DIR/TEST/NAME.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tlbproject/tlb/integration/lab"
)

type envFlags []string

func (e *envFlags) String() string     { return strings.Join(*e, ",") }
func (e *envFlags) Set(v string) error { *e = append(*e, v); return nil }

func main() {
	var env envFlags
	mem := flag.Int("mem", 2048, "guest memory in MiB")
	cpus := flag.Int("cpus", 2, "guest CPUs")
	timeout := flag.Duration("timeout", 30*time.Minute, "deadline for the whole boot")
	dir := flag.String("C", "", "working directory inside the guest (default: the current one)")
	flag.Var(&env, "env", "KEY=VALUE for the command (repeatable)")
	artifacts := flag.String("artifacts", "", "save the files tests print as TLB-ARTIFACT lines under this directory, as TEST/NAME")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: labrun [flags] -- cmd [args...]")
		os.Exit(2)
	}
	if *dir == "" {
		*dir, _ = os.Getwd()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := lab.Run(ctx, lab.Options{
		MemoryMiB: *mem, CPUs: *cpus, Timeout: *timeout, Env: env, Dir: *dir, Output: os.Stdout, ArtifactDir: *artifacts,
	}, flag.Args()...)
	fmt.Fprintf(os.Stderr, "labrun: accel=%s boot=%.1fs total=%.1fs exit=%d\n",
		res.Accel, res.Boot.Seconds(), res.Total.Seconds(), res.ExitCode)
	if err != nil {
		fmt.Fprintln(os.Stderr, "labrun:", err)
		os.Exit(125)
	}
	os.Exit(res.ExitCode)
}
