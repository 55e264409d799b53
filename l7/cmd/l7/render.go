package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/render"
	"github.com/tlbproject/tlb/l7/translate"
)

// runRender handles "l7 render": it prints what would be served to a
// group and exits non-zero when a file or object is rejected.
func runRender(args []string) error {
	fs := flag.NewFlagSet("render", flag.ExitOnError)
	dir := fs.String("config", "", "DSL directory")
	group := fs.String("group", "", "gateway group to render")
	kind := fs.String("kind", string(translate.Gateway), "client kind: gateway or grpc")
	format := fs.String("format", render.FormatBootstrap, "bootstrap (static, for envoy --mode validate), xds (resources as served) or ratelimit (the rate limit service's configuration of the group, its file form)")
	catchAll := fs.String("catch-all-namespaces", "", "comma-separated namespaces that may serve the catch-all host \"*\"")
	certDirs := fs.String("cert-dir", defaultCertDir, certDirUsage)
	rlAddr := fs.String("ratelimit-address", "", rateLimitAddressUsage)
	dnsResolvers := fs.String("dns-resolvers", "", dnsResolversUsage)
	_ = fs.Parse(args)
	if *dir == "" || *group == "" {
		return errors.New("render: --config and --group are required")
	}
	opts, err := rateLimitOptions(model.Options{CatchAllNamespaces: splitList(*catchAll)}, *rlAddr)
	if err != nil {
		return err
	}
	if opts, err = dnsResolversOption(opts, *dnsResolvers); err != nil {
		return err
	}
	out, problems, err := render.Render(dsl.NewDir(*dir, time.Now, splitList(*certDirs)...).ForGroup(*group), *group, translate.Kind(*kind), *format, opts)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "rejected:", p)
	}
	if err != nil {
		return err
	}
	if _, err := os.Stdout.Write(out); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("render: %d problem(s): what they name is not served", len(problems))
	}
	return nil
}
