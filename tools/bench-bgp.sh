#!/usr/bin/env bash
# bench-bgp.sh: time from a VIP prefix handed to the BGP speaker to its
# route in a real BIRD 2 (and back), in network namespaces on this host.
# Needs root, bird2 and iproute2. Ends with BENCH lines.
#
# TODO(issue 3): bgp_kill_recovery_ms and bgp_streams_broken need the full
# director (tlb run with BGP wired) in the lab VM; see integration/bgp.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then echo "bench-bgp: needs root (network namespaces)" >&2; exit 1; fi
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/bgpbench" ./bgp/cmd/bgpbench
"$bin/bgpbench" -n "${BGP_BENCH_CYCLES:-30}"
