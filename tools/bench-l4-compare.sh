#!/usr/bin/env bash
# bench-l4-compare.sh measures the director's full sync from empty against
# an older commit's, alternating the two in ONE lab VM boot: ROUNDS
# (default 3) times the old tlbbench, then this tree's, each at 1,000
# VIPs x 32 real servers with its own `ipvsadm --restore` beside it. Under
# TCG `ipvsadm --restore` alone has varied from 28 to 69 s in one boot, so
# single runs cannot say whether a change made the full sync worse; the
# medians of alternating runs can. It prints the per-round figures and
# BENCH lines with the medians of both.
#
#   tools/bench-l4-compare.sh            # against 13dc4e1 (before issue 26's single-change work)
#   tools/bench-l4-compare.sh COMMIT
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
base=${1:-13dc4e1}
rounds=${ROUNDS:-3}
mkdir -p "$root/.cache/lab"
out=$(mktemp -d "$root/.cache/lab/compare-XXXXXX")
trap 'rm -rf "$out"' EXIT
go build -o "$out/tlbbench-new" ./tlb/cmd/tlbbench
git clone -q --shared --no-checkout "$root" "$out/old"
git -C "$out/old" -c advice.detachedHead=false checkout -q "$base"
(cd "$out/old" && go build -o "$out/tlbbench-old" ./tlb/cmd/tlbbench)
go build -o "$out/labrun" ./integration/cmd/labrun
cat >"$out/rounds.sh" <<SH
#!/bin/sh
for r in \$(seq $rounds); do
  for v in old new; do
    echo "=== round \$r \$v"
    $out/tlbbench-\$v -vips 1000 -real-servers 32 2>&1 | grep -E '^BENCH l4_(full_sync_ms|ipvsadm_restore_ms|full_sync_ratio_vs_ipvsadm) '
  done
done
SH
if [ -n "${TLB_LAB_LOCK:-}" ]; then
  exec 9>"$TLB_LAB_LOCK"
  flock 9
fi
"$out/labrun" -mem "${LAB_MEM:-2048}" -timeout "${LAB_TIMEOUT:-60m}" -- sh "$out/rounds.sh" | tee "$out/rounds.log"
# Medians per side of the full sync and of its ratio to ipvsadm --restore.
awk -v base="$base" '
  /^=== round/ {side = $4}
  /^BENCH l4_full_sync_ms / {sync[side] = sync[side] " " $3}
  /^BENCH l4_full_sync_ratio_vs_ipvsadm / {ratio[side] = ratio[side] " " $3}
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) {t = a[i]; a[i] = a[j]; a[j] = t}
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    printf "BENCH l4_full_sync_ms_median_old %.0f ms (%s)\n", median(sync["old"]), base
    printf "BENCH l4_full_sync_ms_median_new %.0f ms\n", median(sync["new"])
    printf "BENCH l4_full_sync_ratio_median_old %.3f x\n", median(ratio["old"])
    printf "BENCH l4_full_sync_ratio_median_new %.3f x\n", median(ratio["new"])
  }' "$out/rounds.log"
