package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/internal/cli"
	"github.com/tlbproject/tlb/tlb/kube"
)

// drainCommand is `tlb drain NODE` (drain true) and `tlb undrain NODE`:
// set or remove the gateway node's annotation tlb.io/drain, which every
// director of its gateway group follows (docs/l4.md "Draining a
// gateway").
func drainCommand(args []string, drain bool, stdout, stderr io.Writer) int {
	name := "tlb undrain"
	if drain {
		name = "tlb drain"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	kf := cli.RegisterKube(fs, cli.ClientGoDefaults)
	timeout := fs.Duration("timeout", 30*time.Second, "give up on the API server after this long")
	// Flags may come before or after the node, as with kubectl.
	var nodes []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		nodes, rest = append(nodes, fs.Arg(0)), fs.Args()[1:]
	}
	if len(nodes) != 1 || nodes[0] == "" {
		_, _ = fmt.Fprintf(stderr, "%s: name one gateway node: %s [--kubeconfig FILE | --in-cluster] NODE\n", name, name)
		return 2
	}
	if !kf.Enabled() {
		// A person at a terminal: the kubeconfig kubectl would use.
		kf.Kubeconfig = os.Getenv("KUBECONFIG")
		if kf.Kubeconfig == "" {
			if home, err := os.UserHomeDir(); err == nil {
				kf.Kubeconfig = home + "/.kube/config"
			}
		}
	}
	c, err := kf.Clients("tlb-drain")
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	node := nodes[0]
	changed, err := kube.SetDrain(ctx, c.Kube, node, drain, time.Now())
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	switch {
	case drain && changed:
		_, _ = fmt.Fprintf(stdout, "node/%s draining: %s set; weight 0 now, its real server removed once its connections end or the directors' --gateway-drain-timeout passes\n", node, api.AnnotationDrain)
	case drain:
		_, _ = fmt.Fprintf(stdout, "node/%s already draining\n", node)
	case changed:
		_, _ = fmt.Fprintf(stdout, "node/%s undrained: %s removed; it takes new flows again when Ready and healthy\n", node, api.AnnotationDrain)
	default:
		_, _ = fmt.Fprintf(stdout, "node/%s was not draining\n", node)
	}
	return 0
}
