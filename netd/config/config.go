// Package config parses and validates netd's configuration file into the
// gateway model. It only reads bytes it is given (or one file); it must not
// touch the kernel or any other state.
//
// The file is strict YAML: unknown fields are errors that name the field,
// and every validation error names the field it is about.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/internal/filecap"
	"github.com/tlbproject/tlb/netd/model"
)

// DefaultMetricsAddress is where netd serves metrics and health when the
// file does not say: loopback only.
const DefaultMetricsAddress = "127.0.0.1:9101"

// MinMSS and MaxMSS bound a fixed MSS: 536 is the IPv4 minimum every host
// must accept; 65495 is the largest IPv4 packet less the IPv4 and TCP
// headers (jumbo frames need more than 1460).
const (
	MinMSS = model.MinMSS
	MaxMSS = MaxMTU - 40
)

// MaxFileSize caps the configuration file: a larger one is refused before
// it is parsed (and without being read whole), so the last good
// configuration stays. 1 MiB is the most a ConfigMap holds and about
// 75,000 VIPs, far more than a gateway serves; parsing it peaks at about
// 37 MiB resident, where 4 MiB (300,000 VIPs) peaked at 141 MiB, over
// the DaemonSet's 128 Mi limit.
const MaxFileSize = 1 << 20

// File is the on-disk shape of the configuration.
type File struct {
	// Netd holds the daemon's own settings.
	Netd Settings `json:"netd"`
	// VIPs are the addresses this gateway serves: IPv4 VIPs are bound on
	// the IPIP tunnel, IPv6 VIPs on the ip6tnl tunnel ip6tnl0.
	VIPs []string `json:"vips"`
	// Ports redirect external VIP ports to local listener ports.
	Ports []Port `json:"ports,omitempty"`
}

// Port is one entry of the port map in the file: connections to VIP:Port
// are redirected to the listener on VIP:TargetPort.
type Port struct {
	// VIP is one of the file's vips.
	VIP string `json:"vip"`
	// Protocol is "tcp" (the default and the only one supported).
	Protocol string `json:"protocol,omitempty"`
	// Port is the external port clients connect to.
	Port int `json:"port"`
	// TargetPort is the port the local listener binds.
	TargetPort int `json:"targetPort"`
}

// Settings are netd's own settings in the file.
type Settings struct {
	// MetricsAddress is host:port for metrics and health.
	MetricsAddress string `json:"metricsAddress,omitempty"`
	// Tunnel is the IPIP interface name (default tunl0).
	Tunnel string `json:"tunnel,omitempty"`
	// MSS is the largest MSS advertised for connections from the VIPs: a
	// number, auto (derived from the path MTU and the encapsulation, the
	// default) or off.
	MSS *MSSValue `json:"mss,omitempty"`
	// MTU is the path MTU auto derives the MSS from; absent, the MTU of
	// the link of the node's IPv4 default route.
	MTU *int `json:"mtu,omitempty"`
	// GUE, when set, makes the node receive GUE on a UDP port.
	GUE *GUESettings `json:"gue,omitempty"`
	// ListenerPorts is the node's L7 listener port map, used when VIPs
	// come from the Kubernetes API server: for the VIP of every Service
	// that opts into L7, a TCP port of the Service named here is
	// redirected to the unprivileged port the gateway's listener binds
	// (`l7 render` prints the map).
	ListenerPorts []ListenerPort `json:"listenerPorts,omitempty"`
}

// ListenerPort is one entry of netd.listenerPorts.
type ListenerPort struct {
	// Port is the external TCP port clients connect to.
	Port int `json:"port"`
	// TargetPort is the port the gateway's listener binds.
	TargetPort int `json:"targetPort"`
}

// Config is a validated configuration.
type Config struct {
	// MetricsAddress is host:port for metrics and health.
	MetricsAddress string
	// Gateway is the desired kernel state.
	Gateway model.Gateway
	// ListenerPorts maps external TCP ports to the L7 listener's ports
	// (netd.listenerPorts), for VIPs from the Kubernetes API server.
	ListenerPorts map[uint16]uint16
}

// Load reads and parses the file at path; a file over MaxFileSize is
// refused before parsing, with an error naming the file and the cap.
func Load(path string) (Config, error) {
	data, err := filecap.Read(path, MaxFileSize)
	if filecap.IsTooLarge(err) {
		return Config{}, fmt.Errorf("netd config %w", err)
	}
	if err != nil {
		return Config{}, fmt.Errorf("read netd config %s: %w", path, err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("netd config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse parses and validates a configuration. Unknown fields are errors,
// and so are an empty file and one over MaxFileSize.
func Parse(data []byte) (Config, error) {
	if len(data) > MaxFileSize {
		return Config{}, fmt.Errorf("%d bytes is over the %s size cap; refused before parsing", len(data), filecap.Human(MaxFileSize))
	}
	// An empty file is refused rather than read as "no VIPs": a file caught
	// half-written (truncated, not yet filled) must not unbind every VIP.
	if len(bytes.TrimSpace(data)) == 0 {
		return Config{}, errors.New("vips: the file is empty; write `vips: []` to serve no VIPs")
	}
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return Config{}, fmt.Errorf("parse: %w", err)
	}
	return f.Validate()
}

// Validate checks every field, applies defaults and returns the Config.
func (f File) Validate() (Config, error) {
	cfg := Config{MetricsAddress: f.Netd.MetricsAddress}
	if cfg.MetricsAddress == "" {
		cfg.MetricsAddress = DefaultMetricsAddress
	}
	if err := validateHostPort(cfg.MetricsAddress); err != nil {
		return Config{}, fmt.Errorf("netd.metricsAddress: %w", err)
	}

	tunnel := f.Netd.Tunnel
	if tunnel == "" {
		tunnel = model.DefaultTunnel
	}
	if err := validateTunnelName(tunnel); err != nil {
		return Config{}, fmt.Errorf("netd.tunnel: %w", err)
	}

	mss, policy, guePort, err := datapath(f.Netd)
	if err != nil {
		return Config{}, err
	}

	vips := make([]netip.Addr, 0, len(f.VIPs))
	seen := make(map[netip.Addr]int, len(f.VIPs))
	for i, s := range f.VIPs {
		a, err := parseVIP(s)
		if err != nil {
			return Config{}, fmt.Errorf("vips[%d]: %w", i, err)
		}
		if j, dup := seen[a]; dup {
			return Config{}, fmt.Errorf("vips[%d]: %s repeats vips[%d]", i, a, j)
		}
		seen[a] = i
		vips = append(vips, a)
	}
	ports, err := validatePorts(f.Ports, seen)
	if err != nil {
		return Config{}, err
	}
	if cfg.ListenerPorts, err = validateListenerPorts(f.Netd.ListenerPorts); err != nil {
		return Config{}, err
	}
	cfg.Gateway = model.NewGateway(tunnel, vips, mss).WithPorts(ports)
	cfg.Gateway.MSSPolicy, cfg.Gateway.GUEPort = policy, guePort
	return cfg, nil
}

func parseVIP(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", s)
	}
	switch {
	case a.Zone() != "":
		return netip.Addr{}, fmt.Errorf("%q carries a zone; a VIP is a global address", s)
	case a.Is4In6():
		return netip.Addr{}, fmt.Errorf("%q is IPv4-mapped; write it as %s", s, a.Unmap())
	case a.IsUnspecified(), a.IsLoopback(), a.IsMulticast(), a.IsLinkLocalUnicast(),
		a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return netip.Addr{}, fmt.Errorf("%s is not a unicast address a VIP can use", a)
	}
	return a, nil
}

func validateTunnelName(name string) error {
	if len(name) > model.MaxTunnelNameLen {
		return fmt.Errorf("%q is longer than %d bytes (its address label must fit 15)", name, model.MaxTunnelNameLen)
	}
	if name == "." || name == ".." {
		return fmt.Errorf("%q is not an interface name", name)
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return fmt.Errorf("%q has character %q; use letters, digits, '-', '_' or '.'", name, c)
		}
	}
	return nil
}

func validateHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %w", addr, err)
	}
	if host != "" {
		if _, err := netip.ParseAddr(host); err != nil {
			return fmt.Errorf("%q: host %q is not an IP address", addr, host)
		}
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("%q: port %q is not a number in 0..65535", addr, port)
	}
	return nil
}
