#!/usr/bin/env bash
# bench-k8s.sh: the ipam figures, as BENCH lines.
#  1. ipam_20000_allocations_s: 20,000 allocations in one /16 of one
#     allocator (no API server), with the figure from before the bitmap
#     (104 s) printed beside it.
#  2. 1,000 LoadBalancer Services created at once against a real
#     kube-apiserver + etcd on loopback: the time until all have a VIP in
#     status (from the first create, and after the last), and the ipam
#     controller's peak RSS.
#  3. gateway_api_500_routes_programmed_s: 500 HTTPRoutes on 50 Gateways
#     created at once -> every Route Accepted and every Gateway Programmed
#     by `l7 gateway-controller` (goal < 15 s).
# Extra arguments go to the benchmark (e.g. -services 200,
# -ipam-args "--kube-api-qps=50 --kube-api-burst=100", -allocations 0).
set -euo pipefail
cd "$(dirname "$0")/.."
TLB_KUBE_APISERVER="$(./tools/kubernetes/build.sh)"
export TLB_KUBE_APISERVER
bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
go build -o "$bindir/ipam" ./ipam/cmd/ipam
go build -o "$bindir/l7" ./l7/cmd/l7
go build -o "$bindir/k8sbench" ./integration/k8s/cmd/k8sbench
"$bindir/k8sbench" -repo . -ipam "$bindir/ipam" -l7 "$bindir/l7" "$@"
