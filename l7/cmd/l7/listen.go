package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// xdsListenAddr splits an --xds-addr into a network and an address:
// "unix:///run/tlb/xds.sock" or "host:port".
func xdsListenAddr(v string) (network, address string, err error) {
	if p, ok := strings.CutPrefix(v, "unix://"); ok {
		if !strings.HasPrefix(p, "/") {
			return "", "", fmt.Errorf("--xds-addr %q: a unix socket needs an absolute path (unix:///run/tlb/xds.sock)", v)
		}
		return "unix", p, nil
	}
	if _, _, err := net.SplitHostPort(v); err != nil {
		return "", "", fmt.Errorf("--xds-addr %q: want unix:///PATH or host:port: %w", v, err)
	}
	return "tcp", v, nil
}

// podSocket reads the value of a flag that only a unix socket may serve
// (unix:///PATH, in the pod's volume): the authorization service and the
// rate limit service's configuration. Gateway pods share the node's
// network, so a TCP port, loopback or not, is open to every process of
// the node; these interfaces have no other authentication.
func podSocket(flag, v string) (string, error) {
	network, address, err := xdsListenAddr(v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	if network != "unix" {
		return "", fmt.Errorf("%s %s: only a unix socket (unix:///run/tlb/NAME.sock): a TCP port of a gateway node is open to every process on it", flag, v)
	}
	return address, nil
}

// listenADS listens for ADS (and the other control interfaces on unix
// sockets). A stale unix socket left by a previous run of
// this container is removed first; any other kind of file is an error.
// The socket is made readable and writable by the owner and group only
// (the Envoy container of the pod shares the group).
func listenADS(network, address string) (net.Listener, error) {
	if network == "unix" {
		if fi, err := os.Lstat(address); err == nil {
			if fi.Mode()&fs.ModeSocket == 0 {
				return nil, fmt.Errorf("listen for ADS on %s: the path exists and is not a socket", address)
			}
			if err := os.Remove(address); err != nil {
				return nil, fmt.Errorf("listen for ADS on %s: remove the stale socket: %w", address, err)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("listen for ADS on %s: %w", address, err)
		}
	}
	lis, err := net.Listen(network, address)
	if err != nil {
		return nil, fmt.Errorf("listen for ADS on %s: %w", address, err)
	}
	if network == "unix" {
		if err := os.Chmod(address, 0o660); err != nil {
			_ = lis.Close()
			return nil, fmt.Errorf("listen for ADS on %s: restrict the socket: %w", address, err)
		}
	}
	return lis, nil
}

// adminClient returns the base URL and HTTP client for Envoy's admin API
// at admin: unix:///PATH or an http:// URL.
func adminClient(admin string) (string, *http.Client) {
	p, ok := strings.CutPrefix(admin, "unix://")
	if !ok {
		return admin, &http.Client{Timeout: 5 * time.Second}
	}
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", p)
	}}
	return "http://envoy-admin", &http.Client{Timeout: 5 * time.Second, Transport: tr}
}
