#!/usr/bin/env bash
# bench-k8s.sh: 1,000 LoadBalancer Services created at once against a real
# kube-apiserver + etcd on loopback; prints the time until all have a VIP in
# status and the ipam controller's peak RSS as BENCH lines.
# Extra arguments go to the benchmark (e.g. -services 200,
# -ipam-args "--kube-api-qps=200 --kube-api-burst=400").
set -euo pipefail
cd "$(dirname "$0")/.."
TLB_KUBE_APISERVER="$(./tools/kube-apiserver/build.sh)"
export TLB_KUBE_APISERVER
bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
go build -o "$bindir/ipam" ./ipam/cmd/ipam
go build -o "$bindir/k8sbench" ./integration/k8s/cmd/k8sbench
"$bindir/k8sbench" -repo . -ipam "$bindir/ipam" "$@"
