// Package render is what "l7 render" prints: a group's configuration run
// through the same stages as l7 serve (load, resolve, translate, validate)
// once, formatted as a static Envoy bootstrap, the xDS resources as served
// (keys redacted) or the rate limit service's file. It does no I/O but
// reading the directory it is given.
package render

import (
	"bytes"
	"fmt"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
	"github.com/tlbproject/tlb/l7/xds"
)

// Render formats.
const (
	// FormatBootstrap is a static Envoy bootstrap for "envoy --mode validate".
	FormatBootstrap = "bootstrap"
	// FormatXDS is the resources as served over xDS, one list per type.
	FormatXDS = "xds"
	// FormatRateLimit is the rate limit service's configuration of the
	// group (its global limits), as the file the service can load.
	FormatRateLimit = "ratelimit"
)

// Render loads the directory d and returns the full config of one group as Envoy YAML,
// with every private key redacted (xds format) or referred to by file path
// (bootstrap format). Problems in the directory are returned alongside;
// the output holds what would be served despite them (the caller should
// still fail: something the author wrote is not served).
func Render(d *dsl.Dir, group string, kind translate.Kind, format string, opts model.Options) ([]byte, []error, error) {
	dir := d.Path()
	cfg, errs, err := d.Load()
	if err != nil {
		return nil, nil, err
	}
	r := model.Resolve(cfg, opts)
	for _, p := range r.Problems {
		errs = append(errs, p)
	}
	found := false
	for _, g := range translate.Groups(r) {
		found = found || g == group
	}
	if !found {
		return nil, errs, fmt.Errorf("render group %q: no gateway or service in %s names it (groups: %v)", group, dir, translate.Groups(r))
	}
	set := translate.Group(r, group, kind)
	if err := validate.Set(set); err != nil {
		return nil, errs, fmt.Errorf("render group %q: resources fail validation: %w", group, err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# TLB L7 config of group %q for %s clients, schema %s.\n", group, kind, xds.Generation())
	if kind == translate.Gateway {
		out.WriteString("# Listeners (each binds its VIP:port, freebind; hosts served there):\n")
		for _, l := range r.Listeners {
			if l.Group == group {
				fmt.Fprintf(&out, "#   %s:%d/%s %s services %v\n", l.VIP, l.Port, l.Protocol, l.Name, l.Services)
			}
		}
	}
	switch format {
	case FormatRateLimit:
		y, err := rateLimitYAML(r, group)
		if err != nil {
			return nil, errs, err
		}
		out.Write(y)
	case FormatXDS:
		y, err := translate.ResourcesYAML(set)
		if err != nil {
			return nil, errs, err
		}
		out.Write(y)
	case FormatBootstrap:
		if kind != translate.Gateway {
			return nil, errs, fmt.Errorf("render group %q: the bootstrap format is for gateways; use --format xds for %s", group, kind)
		}
		b, err := translate.StaticBootstrap(set)
		if err != nil {
			return nil, errs, err
		}
		y, err := translate.YAML(b)
		if err != nil {
			return nil, errs, err
		}
		out.WriteString("# Keys are read from files (the mounted Secret), never printed.\n")
		out.Write(y)
	default:
		return nil, errs, fmt.Errorf("render: unknown format %q (want %s, %s or %s)", format, FormatBootstrap, FormatXDS, FormatRateLimit)
	}
	return out.Bytes(), errs, nil
}

// rateLimitYAML is the rate limit service's configuration of group, as
// the file (ratelimit.ServiceConfig.YAML) the service can load.
func rateLimitYAML(r model.Resolved, group string) ([]byte, error) {
	cfg, err := model.GroupRateLimits(r, group)
	if err != nil {
		return nil, fmt.Errorf("render group %q: rate limit configuration: %w", group, err)
	}
	return cfg.YAML()
}
