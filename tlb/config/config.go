package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/internal/filecap"
	"github.com/tlbproject/tlb/tlb/health"
	"github.com/tlbproject/tlb/tlb/model"
	"sigs.k8s.io/yaml"
)

// Config is a parsed, valid configuration file.
type Config struct {
	// Director holds the director's own settings.
	Director Director
	// Desired is the L4 model the director programs.
	Desired model.Desired
	// BGP is the `bgp:` section parsed strictly by package bgp (defaults
	// applied), nil when absent: the director then announces nothing.
	BGP *bgp.Config
	// Health is the `health:` section parsed strictly by package health
	// (defaults applied), nil when absent: every real server then counts
	// as healthy and none is probed.
	Health *health.Config

	raw       []byte    // the file's bytes, so a watcher knows what it applied
	overrides Overrides // command-line settings a watcher applies to every new version
}

// Overrides are settings given on the command line that take precedence
// over the file's, so one file can serve every director of a DaemonSet.
type Overrides struct {
	// RouterID replaces bgp.routerID when set (and a bgp section exists).
	RouterID string
}

// Override applies o to c. A Watcher started with c applies o to every
// later version of the file too, so an override is never reported as a
// change of the file's settings.
func (c *Config) Override(o Overrides) {
	c.overrides = o
	if o.RouterID != "" && c.BGP != nil {
		c.BGP.RouterID = o.RouterID
	}
}

// Director is the `director:` section.
type Director struct {
	// MetricsAddress is where metrics, /healthz and /readyz are served.
	MetricsAddress string
	// RuntimeDir holds the director's ownership record.
	RuntimeDir string
	// VIPRanges are the prefixes every VIP must be in (empty: any). With
	// a `bgp:` section they are the subnets announced.
	VIPRanges []netip.Prefix
	// DrainPeriod is how long the director keeps serving after it has
	// withdrawn its routes on SIGTERM, before it exits.
	DrainPeriod time.Duration
	// ResyncInterval is how often the whole state is re-applied, which
	// also repairs drift.
	ResyncInterval time.Duration
	// Encap is the tunnel to every real server of every service
	// (director.encapsulation; the zero value is IPIP).
	Encap model.Encap
}

// Load reads and parses the file at path. A file over MaxFileSize is
// refused without being read whole.
func Load(path string) (*Config, error) {
	return load(path, true)
}

// LoadSettings reads the file at path for a director whose services come
// from another source (the Kubernetes API server): the file holds only
// the director's settings, `bgp:` and `health:`, and a `services:` list
// is an error rather than being silently ignored.
func LoadSettings(path string) (*Config, error) {
	return load(path, false)
}

func load(path string, withServices bool) (*Config, error) {
	data, err := filecap.Read(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return parse(path, data, withServices)
}

// ParseSettings is Parse for a file without services (see LoadSettings).
func ParseSettings(name string, data []byte) (*Config, error) {
	return parse(name, data, false)
}

// Parse parses data, read from the file name (used in errors). Every error
// starts with "config NAME:" and names the field. Data over MaxFileSize is
// refused before parsing. A nil error means the
// whole file is valid and its model passes model.Desired.Validate.
func Parse(name string, data []byte) (*Config, error) {
	return parse(name, data, true)
}

// parse parses a whole file; withServices says whether the services come
// from it (required) or from elsewhere (forbidden).
func parse(name string, data []byte, withServices bool) (*Config, error) {
	if err := filecap.Check(name, int64(len(data)), MaxFileSize); err != nil {
		return nil, fmt.Errorf("config %w", err)
	}
	if unknown := unknownFields(data); len(unknown) > 0 {
		errs := make([]error, 0, len(unknown))
		for _, u := range unknown {
			errs = append(errs, fmt.Errorf("config %s: %s", name, u))
		}
		return nil, errors.Join(errs...)
	}
	var doc fileDoc
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return nil, fmt.Errorf("config %s: %s", name, cleanYAMLError(err))
	}
	switch {
	case withServices && doc.Services == nil:
		return nil, fmt.Errorf("config %s: services: required (write `services: []` for none)", name)
	case !withServices && doc.Services != nil:
		return nil, fmt.Errorf("config %s: services: not allowed when services come from the Kubernetes API server; remove the list", name)
	case !withServices:
		doc.Services = &[]serviceDoc{}
	}
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config %s: %s: %s", name, field, fmt.Sprintf(format, args...)))
	}
	cfg := &Config{Director: directorSettings(doc.Director, bad)}
	cfg.Desired.VIPRanges = cfg.Director.VIPRanges
	if doc.Director != nil && doc.Director.Encapsulation != nil {
		if !withServices {
			bad("director.encapsulation", "not allowed when services come from the Kubernetes API server: set spec.encapsulation of the L4Cluster")
		}
		cfg.Director.Encap = encapsulation(*doc.Director.Encapsulation, bad)
	}
	if !withServices && len(cfg.Director.VIPRanges) > 0 {
		bad("director.vipRanges", "not allowed when services come from the Kubernetes API server: the VIP ranges are the VIPPools of the director's L4 cluster")
	}
	cfg.BGP, cfg.Health = sections(doc, cfg.Director, withServices, bad)
	var l7Origin []int // the services entry of each L7 service
	for i, s := range *doc.Services {
		path := fmt.Sprintf("services[%d]", i)
		svc := service(path, s, bad)
		svc.Encap = cfg.Director.Encap
		cfg.Desired.Services = append(cfg.Desired.Services, svc)
		if l := l7Service(path, s, svc, present(doc.Health), bad); l != nil {
			cfg.Desired.L7 = append(cfg.Desired.L7, *l)
			l7Origin = append(l7Origin, i)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, fe := range model.FieldErrors(cfg.Desired.Validate()) {
		if fe.List == model.ListL7 {
			l7Error(fe, l7Origin, bad)
			continue
		}
		field := fmt.Sprintf("services[%d].%s", fe.Index, fe.Field)
		if fe.Service != "" {
			field += " (service " + fe.Service + ")"
		}
		bad(field, "%s", fe.Reason)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	cfg.raw = data
	return cfg, nil
}

func directorSettings(d *directorDoc, bad func(field, format string, args ...any)) Director {
	out := Director{MetricsAddress: DefaultMetricsAddress, RuntimeDir: DefaultRuntimeDir, ResyncInterval: DefaultResync, DrainPeriod: DefaultDrainPeriod}
	if d == nil {
		return out
	}
	if d.MetricsAddress != nil {
		out.MetricsAddress = *d.MetricsAddress
		if out.MetricsAddress != "" {
			if _, _, err := net.SplitHostPort(out.MetricsAddress); err != nil {
				bad("director.metricsAddress", "%q is not host:port (empty disables)", out.MetricsAddress)
			}
		}
	}
	if d.RuntimeDir != nil {
		out.RuntimeDir = *d.RuntimeDir
		if !strings.HasPrefix(out.RuntimeDir, "/") {
			bad("director.runtimeDir", "%q must be an absolute path", out.RuntimeDir)
		}
	}
	for i, r := range d.VIPRanges {
		p, err := netip.ParsePrefix(r)
		if err != nil {
			bad(fmt.Sprintf("director.vipRanges[%d]", i), "%q is not a CIDR prefix", r)
			continue
		}
		if p.Masked() != p {
			bad(fmt.Sprintf("director.vipRanges[%d]", i), "%q has host bits set (did you mean %s?)", r, p.Masked())
			continue
		}
		out.VIPRanges = append(out.VIPRanges, p)
	}
	if d.ResyncInterval != nil {
		dur, err := time.ParseDuration(*d.ResyncInterval)
		switch {
		case err != nil:
			bad("director.resyncInterval", "%q is not a duration like 30s", *d.ResyncInterval)
		case dur < time.Second:
			bad("director.resyncInterval", "%s is below the minimum of 1s", dur)
		default:
			out.ResyncInterval = dur
		}
	}
	if d.DrainPeriod != nil {
		dur, err := time.ParseDuration(*d.DrainPeriod)
		switch {
		case err != nil:
			bad("director.drainPeriod", "%q is not a duration like 10s", *d.DrainPeriod)
		case dur < 0 || dur > MaxDrainPeriod:
			bad("director.drainPeriod", "%s is outside 0s..%s", dur, MaxDrainPeriod)
		default:
			out.DrainPeriod = dur
		}
	}
	return out
}

// encapsulation reads director.encapsulation; a bad value is reported
// naming its field and read as IPIP.
func encapsulation(d encapDoc, bad func(field, format string, args ...any)) model.Encap {
	if d.Port < 0 || d.Port > 65535 {
		bad("director.encapsulation.port", "%d is not 1..65535", d.Port)
		return model.Encap{}
	}
	e := model.Encap{Type: model.EncapType(d.Type), Port: uint16(d.Port)}
	if d.Type == "" {
		bad("director.encapsulation.type", "required: ipip or gue")
		return model.Encap{}
	}
	if field, reason := e.Check(); field != "" {
		bad("director.encapsulation."+field, "%s", reason)
		return model.Encap{}
	}
	return e.Normal()
}

func service(path string, s serviceDoc, bad func(field, format string, args ...any)) model.Service {
	out := model.Service{Protocol: model.Protocol(s.Protocol), Scheduler: model.Scheduler(s.Scheduler)}
	if s.VIP == "" {
		bad(path+".vip", "required")
	} else if a, err := netip.ParseAddr(s.VIP); err != nil {
		bad(path+".vip", "%q is not an IP address", s.VIP)
	} else {
		out.VIP = a
	}
	if s.Port < 1 || s.Port > 65535 {
		bad(path+".port", "%d is not 1..65535", s.Port)
	} else {
		out.Port = uint16(s.Port)
	}
	if out.Protocol == "" {
		out.Protocol = defaultProtocol
	}
	if s.Flags != nil {
		out.Flags = []model.Flag{}
		for _, f := range *s.Flags {
			out.Flags = append(out.Flags, model.Flag(f))
		}
	}
	for j, rs := range s.RealServers {
		field := fmt.Sprintf("%s.realServers[%d]", path, j)
		r := model.RealServer{Weight: model.DefaultWeight()}
		if rs.Weight != nil {
			r.Weight = *rs.Weight
		}
		if rs.Address == "" {
			bad(field+".address", "required")
		} else if a, err := netip.ParseAddr(rs.Address); err != nil {
			bad(field+".address", "%q is not an IP address", rs.Address)
		} else {
			r.Addr = a
		}
		out.RealServers = append(out.RealServers, r)
	}
	return out
}

// cleanYAMLError drops the decoder's internal prefixes, keeping the part
// that names the field and the problem.
func cleanYAMLError(err error) string {
	msg := err.Error()
	for _, p := range []string{"error unmarshaling JSON: ", "while decoding JSON: ", "error converting YAML to JSON: ", "Go struct field fileDoc.", "Go struct field serviceDoc.", "Go struct field directorDoc.", "Go struct field encapDoc.", "Go struct field realServerDoc.", "Go struct field l7ProbeDoc."} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	return msg
}
