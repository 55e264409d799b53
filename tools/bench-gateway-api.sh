#!/usr/bin/env bash
# bench-gateway-api.sh: the upstream Gateway API conformance suite
# (sigs.k8s.io/gateway-api/conformance, the version go.mod pins) against
# `l7 gateway-controller` and the ipam controller, on a real kube-apiserver
# + etcd + kube-controller-manager on loopback with a simulated node
# (integration/gatewayconformance) that runs the suite's echo server
# (echo-basic, built here from the pinned module) for its Pods, and the
# group's l7 serve with the real Envoy (tools/deps.sh fetches it) serving
# the Gateways' addresses. Every test of the claimed features runs,
# unmodified, traffic included; the run has a network namespace of its own
# (unshare --net). Prints
#   BENCH gateway_api_conformance_passed N
#   BENCH gateway_api_conformance_skipped S   (tests that skipped themselves)
#   BENCH gateway_api_conformance_failed F
#   BENCH gateway_api_{core,extended}_{passed,failed}_<profile> K
# and keeps the suite's report YAML and the logs under
# ${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/gateway-api-conformance/.
#
# Exit status: non-zero when the harness produced no figures; with
# TLB_CONFORMANCE_STRICT=1 (CI) also when a test failed. Extra arguments go
# to the test binary (e.g. -test.run 'TestGatewayAPIConformance/Run/GatewayInvalidRouteKind').
# TLB_CONFORMANCE_TIMEOUTS overrides the suite's timeouts
# ("GatewayMustHaveCondition:60;CreateTimeout:30", seconds).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ! -x "${TLB_ETCD:-/usr/bin/etcd}" ]]; then
	echo "bench-gateway-api: etcd not found; install the Debian package etcd-server (tools/deps.sh)" >&2
	exit 1
fi
TLB_KUBE_APISERVER="$(./tools/kubernetes/build.sh)"
export TLB_KUBE_APISERVER

bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
go build -o "$bindir/l7" ./l7/cmd/l7
export TLB_L7_BIN="$bindir/l7" TLB_BIN_DIR="$bindir"
go build -o "$bindir/echo-basic" sigs.k8s.io/gateway-api/conformance/echo-basic
export TLB_ECHO_BASIC_BIN="$bindir/echo-basic"
go build -o "$bindir/ipam" ./ipam/cmd/ipam
export TLB_IPAM_BIN="$bindir/ipam"
go test -c -tags conformance -o "$bindir/conformance.test" ./integration/gatewayconformance

export TLB_CONFORMANCE_REPORT="${TLB_CONFORMANCE_REPORT:-${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/gateway-api-conformance/report.yaml}"
out="$(dirname "$TLB_CONFORMANCE_REPORT")"
mkdir -p "$out"
log="$out/run.log"
status=0
start=$(date +%s)
# A network namespace of the run's own: the VIP pool on its loopback, the
# Pods' veth pairs, Envoy's listeners; all gone when the run ends.
unshare=(unshare --net)
if [[ $EUID -ne 0 ]]; then
	unshare+=(--map-root-user)
fi
# The run's temporary files (the API server's, the Pods', the gateway's)
# under $bindir, which goes when the script ends even if the run was killed.
mkdir -p "$bindir/tmp"
(cd integration/gatewayconformance &&
	TMPDIR="$bindir/tmp" "${unshare[@]}" "$bindir/conformance.test" -test.run '^TestGatewayAPIConformance$' -test.v -test.timeout 40m "$@") >"$log" 2>&1 || status=$?
echo "bench-gateway-api: the suite ran $(($(date +%s) - start)) s; report $TLB_CONFORMANCE_REPORT; log $log" >&2
# The tests that failed, by name (the suite's subtests are two levels down).
grep -E '^        --- FAIL: TestGatewayAPIConformance/Run/[^/ ]+ ' "$log" | sed 's/^ *//' >&2 || true
grep -E '^    --- FAIL: TestGatewayAPIConformance/Setup ' "$log" | sed 's/^ *//' >&2 || true
if ! grep -E '^BENCH gateway_api_' "$log"; then
	echo "bench-gateway-api: the harness printed no figures; the end of $log:" >&2
	tail -60 "$log" >&2
	exit 1
fi
if [[ "${TLB_CONFORMANCE_STRICT:-}" == 1 ]]; then
	exit "$status"
fi
