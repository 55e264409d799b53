#!/usr/bin/env bash
# bench-l4.sh measures the L4 director on a real kernel: inside ONE lab VM
# boot it programs 1,000 VIPs x 32 real servers from empty, times
# `ipvsadm --restore` of the same rules, a no-op resync and a single
# real-server change, and prints the director's peak RSS. The output ends
# with `BENCH <name> <value> <unit>` lines.
#
#   tools/bench-l4.sh                         # 1000 x 32
#   BENCH_VIPS=100 BENCH_RS=8 tools/bench-l4.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(pwd)/.cache/lab/bin"
mkdir -p "$bin"
go build -o "$bin/tlbbench" ./tlb/cmd/tlbbench
go build -o "$bin/labrun" ./integration/cmd/labrun
exec "$bin/labrun" -mem "${LAB_MEM:-2048}" -timeout "${LAB_TIMEOUT:-30m}" -- \
  "$bin/tlbbench" -vips "${BENCH_VIPS:-1000}" -real-servers "${BENCH_RS:-32}"
