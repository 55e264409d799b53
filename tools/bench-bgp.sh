#!/usr/bin/env bash
# bench-bgp.sh: BGP figures for issue 3. Ends with BENCH lines.
#  1. On the host, in network namespaces: time from a VIP prefix handed to
#     the BGP speaker to its route in a real BIRD 2, and back; then time
#     from the director's link cut to its route gone at BIRD, with BFD
#     (bgp_link_loss_withdraw_ms, goal < 1000) and with the hold time alone
#     (bgp_link_loss_withdraw_hold_time_ms) (bgpbench).
#  2. In the lab VM (skip with BGP_BENCH_LAB=0): two directors (`tlb run`
#     with BGP and health) behind BIRD with ECMP, 100 streams, one director
#     killed silently: readiness-to-route time, detection time, time until
#     every stream moves again, and broken streams
#     (integration/director TestAnnounceOnReadyThenSurviveKill); then the
#     same two directors with BFD, one's link cut under 100 streams: time
#     until BIRD drops it and broken streams (TestBFDLinkCutKeepsStreams).
# Needs root, bird2, iproute2, nftables (and the lab's qemu for part 2).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then echo "bench-bgp: needs root (network namespaces)" >&2; exit 1; fi
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/bgpbench" ./bgp/cmd/bgpbench
"$bin/bgpbench" -n "${BGP_BENCH_CYCLES:-30}" | tee "$bin/host.out"
if [ "${BGP_BENCH_LAB:-1}" != 0 ]; then
  LAB_RUN='^(TestAnnounceOnReadyThenSurviveKill|TestBFDLinkCutKeepsStreams)$' ./tools/lab-test.sh ./integration/director 2>&1 | tee "$bin/lab.out" | grep -E 'BENCH|--- (PASS|FAIL)' || true
  for t in TestAnnounceOnReadyThenSurviveKill TestBFDLinkCutKeepsStreams; do
    grep -q -- "--- PASS: $t" "$bin/lab.out" || { echo "bench-bgp: lab run $t failed (see above)" >&2; exit 1; }
  done
fi
echo "--- summary"
grep -h '^BENCH ' "$bin/host.out"
if [ -f "$bin/lab.out" ]; then sed -n 's/.*: \(BENCH .*\)$/\1/p' "$bin/lab.out"; fi
