//go:build conformance

package gatewayconformance

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

const (
	// poolsFile is the run's address plan: the VIP pool the IPAM gives
	// the Gateways' addresses from.
	poolsFile = "testdata/pools.yaml"
	// gatewayGroup is the L7 gateway group of class tlb's Gateways: the
	// class names no GatewayClassConfig, and the pool's L4 cluster is not
	// labelled with another group.
	gatewayGroup = "default"
)

// unusableAddress is in no VIPPool of poolsFile: the IPAM refuses it
// (NoMatchingPool), as the suite's GatewayStaticAddresses expects of an
// unusable address.
const unusableAddress = "192.0.2.200"

// usableAddress is an address of pool the IPAM, which hands out the
// lowest free address, gives no Gateway of the suite before
// GatewayStaticAddresses asks for it: the last but one.
func usableAddress(pool netip.Prefix) string {
	last := pool.Addr()
	for next := last.Next(); pool.Contains(next); next = next.Next() {
		last = next
	}
	return last.Prev().String()
}

// ipAddress is a requested Gateway address of type IPAddress.
func ipAddress(v string) gatewayv1.GatewaySpecAddress {
	ip := gatewayv1.IPAddressType
	return gatewayv1.GatewaySpecAddress{Type: &ip, Value: v}
}

// ownNetwork makes the run's network namespace (tools/bench-gateway-api.sh
// starts the test binary under `unshare --net`, so it holds only a
// loopback device) reach the Gateways: loopback up, the VIP pool local on
// it, so Envoy binds any address the IPAM gives and the suite's clients
// reach it. It refuses a namespace with other devices: the run's
// addresses, routes and veth pairs must never land on a shared host's
// network. It returns the pool.
func ownNetwork(t *testing.T) (netip.Prefix, error) {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		return netip.Prefix{}, err
	}
	if len(ifs) != 1 || ifs[0].Flags&net.FlagLoopback == 0 {
		return netip.Prefix{}, fmt.Errorf("the run needs a network namespace of its own (found %d devices): start it with tools/bench-gateway-api.sh, which runs it under unshare --net", len(ifs))
	}
	pool, err := vipPool()
	if err != nil {
		return netip.Prefix{}, err
	}
	if err := ipBatch(nil, fmt.Sprintf("link set lo up\naddr add %s dev lo\n", pool)); err != nil {
		return netip.Prefix{}, err
	}
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", pool.String(), "dev", "lo").Run() })
	return pool, nil
}

// vipPool is the one CIDR of poolsFile's VIPPool.
func vipPool() (netip.Prefix, error) {
	objs, err := apiserver.ReadManifests(poolsFile)
	if err != nil {
		return netip.Prefix{}, err
	}
	var cidrs []string
	for _, o := range objs {
		if o.GetKind() != "VIPPool" {
			continue
		}
		got, _, err := unstructured.NestedStringSlice(o.Object, "spec", "cidrs")
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%s: VIPPool %s: spec.cidrs: %w", poolsFile, o.GetName(), err)
		}
		cidrs = append(cidrs, got...)
	}
	if len(cidrs) != 1 {
		return netip.Prefix{}, fmt.Errorf("%s: want one VIPPool CIDR, got %v", poolsFile, cidrs)
	}
	return netip.ParsePrefix(cidrs[0])
}

// startGateway runs the gateway pod of group gatewayGroup as
// deploy/envoy/gateway.yaml deploys it (that group's bootstrap, then l7
// serve reading the API server, then the real Envoy), with both
// processes' output in logDir/gateway.log, and waits until Envoy is
// ready. Envoy binds the Gateways' addresses of pool (local on lo).
func startGateway(t *testing.T, kubeconfig, logDir string, pool netip.Prefix) *envoyproc.Gateway {
	t.Helper()
	dir := t.TempDir()
	manifest, err := envoyproc.ManifestForGroup(dir, gatewayGroup)
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(logDir, "gateway.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logf.Close() })
	// The gateways' DSL directory: empty, every route comes from the API
	// server.
	dsl := filepath.Join(dir, "dsl")
	if err := os.Mkdir(dsl, 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := envoyproc.Start(envoyproc.Options{
		Group: gatewayGroup, Dir: filepath.Join(dir, "gw"), Manifest: manifest, Log: logf,
		Serve: []string{"--config=" + dsl, "--kubeconfig=" + kubeconfig, "--log-format=text"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := g.WaitReady(ctx); err != nil {
		t.Fatalf("the gateway of group %s (binding %s): %v", gatewayGroup, pool, err)
	}
	return g
}
