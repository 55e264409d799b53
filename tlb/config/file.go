package config

import (
	"encoding/json"
	"time"
)

// Defaults for fields left out of the file.
const (
	DefaultMetricsAddress = "127.0.0.1:9100"
	DefaultRuntimeDir     = "/run/tlb"
	DefaultResync         = 30 * time.Second
	// DefaultDrainPeriod is how long a director keeps its IPVS rules
	// serving after withdrawing its routes on SIGTERM.
	DefaultDrainPeriod = 10 * time.Second
	// MaxDrainPeriod bounds director.drainPeriod.
	MaxDrainPeriod  = 10 * time.Minute
	defaultProtocol = "tcp"
	// MaxFileSize caps the config file: a larger one is refused before
	// it is parsed (the last good config stays). 4 MiB holds about
	// 45,000 services with two real servers each; parsing that took
	// 2.8-4.8 s and peaked at 272 MiB resident on the 2-core lab machine,
	// inside the director's 512 Mi limit, where a 50 MB file took 41 s
	// and 460 MB.
	MaxFileSize = 4 << 20
)

// fileDoc is the file as written. Addresses and durations are strings so
// that errors can name the field they are in.
type fileDoc struct {
	Director *directorDoc `json:"director,omitempty"`
	// Services is required, so that an empty or truncated file is an
	// error rather than an order to delete every service.
	Services *[]serviceDoc   `json:"services"`
	BGP      json.RawMessage `json:"bgp,omitempty"`
	Health   json.RawMessage `json:"health,omitempty"`
}

type directorDoc struct {
	MetricsAddress *string  `json:"metricsAddress,omitempty"`
	RuntimeDir     *string  `json:"runtimeDir,omitempty"`
	VIPRanges      []string `json:"vipRanges,omitempty"`
	ResyncInterval *string  `json:"resyncInterval,omitempty"`
	DrainPeriod    *string  `json:"drainPeriod,omitempty"`
	// Encapsulation is the L4 cluster's tunnel to its gateways.
	Encapsulation *encapDoc `json:"encapsulation,omitempty"`
}

// encapDoc is director.encapsulation: {type: ipip} (the default) or
// {type: gue, port: 6080}.
type encapDoc struct {
	Type string `json:"type"`
	Port int    `json:"port,omitempty"`
}

type serviceDoc struct {
	VIP         string          `json:"vip"`
	Port        int             `json:"port"`
	Protocol    string          `json:"protocol,omitempty"`
	Scheduler   string          `json:"scheduler,omitempty"`
	Flags       *[]string       `json:"flags,omitempty"`
	RealServers []realServerDoc `json:"realServers"`
	// L7Backends are the application's backends (ip:port) behind this
	// service's gateways; the director probes them, and the VIP is down
	// for GTM (and withdrawn in per-VIP mode) while none is up.
	L7Backends *[]string   `json:"l7Backends,omitempty"`
	L7Probe    *l7ProbeDoc `json:"l7Probe,omitempty"`
}

type realServerDoc struct {
	Address string `json:"address"`
	Weight  *int   `json:"weight,omitempty"`
}
