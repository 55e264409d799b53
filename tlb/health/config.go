package health

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Probe kinds.
const (
	// KindTCP succeeds when a TCP connection to the port opens.
	KindTCP = "tcp"
	// KindHTTP succeeds when GET http://<real server>:<port><path> answers 2xx.
	KindHTTP = "http"
)

// Announce modes.
const (
	// AnnounceSubnets announces each VIP subnet that holds a healthy VIP.
	AnnounceSubnets = "subnets"
	// AnnounceVIPs announces a /32 per healthy VIP, so one VIP can be
	// withdrawn alone (and GTM and BGP agree).
	AnnounceVIPs = "vips"
)

// Defaults applied by Config.Defaulted.
const (
	DefaultInterval = time.Second
	DefaultTimeout  = 500 * time.Millisecond
	DefaultRise     = 2
	DefaultFall     = 3
	DefaultPath     = "/healthz"
)

// Config is the `health:` section of the director's configuration. In
// YAML, interval and timeout are Go duration strings ("1s", "250ms").
type Config struct {
	// Kind is KindTCP (default) or KindHTTP.
	Kind string `json:"kind,omitempty"`
	// Port is the health port on every real server. Required.
	Port uint16 `json:"port"`
	// Path is the HTTP path for KindHTTP; DefaultPath when empty.
	Path string `json:"path,omitempty"`
	// Interval between probes of one real server; DefaultInterval when zero.
	Interval time.Duration `json:"-"`
	// Timeout of one probe; DefaultTimeout when zero. Below Interval.
	Timeout time.Duration `json:"-"`
	// Rise is how many successes in a row bring a down real server up.
	Rise int `json:"rise,omitempty"`
	// Fall is how many failures in a row take an up real server down.
	Fall int `json:"fall,omitempty"`
	// Announce is AnnounceSubnets (default) or AnnounceVIPs.
	Announce string `json:"announce,omitempty"`
}

// Parse reads a YAML (or JSON) Config, rejecting unknown fields, applies
// defaults and validates it.
func Parse(data []byte) (Config, error) {
	var f struct {
		Config
		Interval string `json:"interval,omitempty"`
		Timeout  string `json:"timeout,omitempty"`
	}
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return Config{}, fmt.Errorf("parse health config: %w", err)
	}
	c := f.Config
	for _, d := range []struct {
		field string
		in    string
		out   *time.Duration
	}{{"interval", f.Interval, &c.Interval}, {"timeout", f.Timeout, &c.Timeout}} {
		if d.in == "" {
			continue
		}
		v, err := time.ParseDuration(d.in)
		if err != nil {
			return Config{}, fmt.Errorf("health config: %s: %q is not a duration like \"1s\"", d.field, d.in)
		}
		*d.out = v
	}
	c = c.Defaulted()
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Defaulted returns c with unset fields set to their defaults.
func (c Config) Defaulted() Config {
	if c.Kind == "" {
		c.Kind = KindTCP
	}
	if c.Kind == KindHTTP && c.Path == "" {
		c.Path = DefaultPath
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Rise == 0 {
		c.Rise = DefaultRise
	}
	if c.Fall == 0 {
		c.Fall = DefaultFall
	}
	if c.Announce == "" {
		c.Announce = AnnounceSubnets
	}
	return c
}

// Validate checks a defaulted Config; errors name the field.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("health config: %s: %s", field, fmt.Sprintf(format, args...)))
	}
	if c.Kind != KindTCP && c.Kind != KindHTTP {
		bad("kind", "%q is not %q or %q", c.Kind, KindTCP, KindHTTP)
	}
	if c.Port == 0 {
		bad("port", "must be set")
	}
	if c.Kind == KindHTTP && (!strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, " \t\r\n#")) {
		bad("path", "%q is not an absolute URL path", c.Path)
	}
	if c.Kind == KindTCP && c.Path != "" {
		bad("path", "only applies to kind %q", KindHTTP)
	}
	if c.Interval < 10*time.Millisecond || c.Interval > time.Hour {
		bad("interval", "%v is outside 10ms..1h", c.Interval)
	}
	if c.Timeout <= 0 || c.Timeout > c.Interval {
		bad("timeout", "%v must be positive and at most interval %v", c.Timeout, c.Interval)
	}
	if c.Rise < 1 || c.Rise > 100 {
		bad("rise", "%d is outside 1..100", c.Rise)
	}
	if c.Fall < 1 || c.Fall > 100 {
		bad("fall", "%d is outside 1..100", c.Fall)
	}
	if c.Announce != AnnounceSubnets && c.Announce != AnnounceVIPs {
		bad("announce", "%q is not %q or %q", c.Announce, AnnounceSubnets, AnnounceVIPs)
	}
	return errors.Join(errs...)
}
