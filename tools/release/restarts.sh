#!/usr/bin/env bash
# restarts.sh OLD.yaml NEW.yaml: exit 0 when every Envoy DaemonSet
# (tlb-gateway-*) is the same in two releases' manifests, so upgrading from
# OLD to NEW leaves every Envoy running; else show how they differ and
# exit 1 (their pods are replaced, one node at a time, each drained).
set -euo pipefail
old=${1:?usage: tools/release/restarts.sh OLD.yaml NEW.yaml}
new=${2:?usage: tools/release/restarts.sh OLD.yaml NEW.yaml}
# The objects (one YAML document each) that are Envoy DaemonSets.
envoy_sets() {
	awk 'BEGIN {RS = "\n---\n"} /(^|\n)kind: DaemonSet\n/ && /\n  name: tlb-gateway-/ {print; print "---"}' "$1"
}
a=$(envoy_sets "$old")
b=$(envoy_sets "$new")
[ -n "$b" ] || { echo "restarts: no Envoy DaemonSet (tlb-gateway-*) in $new" >&2; exit 2; }
[ "$a" = "$b" ] && exit 0
echo "restarts: the Envoy DaemonSets differ between $old and $new:" >&2
diff <(echo "$a") <(echo "$b") >&2 || true
exit 1
