#!/usr/bin/env bash
# k8s-test.sh runs the Kubernetes integration tests (build tag k8s) against
# a real kube-apiserver and etcd started by the tests on loopback.
# kube-apiserver is built once from the module proxy and cached under
# ${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/k8s/<version>/; etcd comes from the
# Debian package etcd-server. Extra arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ! -x "${TLB_ETCD:-/usr/bin/etcd}" ]]; then
	echo "k8s-test: etcd not found; install the Debian package etcd-server (tools/deps.sh)" >&2
	exit 1
fi
TLB_KUBE_APISERVER="$(./tools/kubernetes/build.sh)"
export TLB_KUBE_APISERVER

bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
go build -o "$bindir/ipam" ./ipam/cmd/ipam
export TLB_IPAM_BIN="$bindir/ipam"
go build -o "$bindir/l7" ./l7/cmd/l7
export TLB_L7_BIN="$bindir/l7"
# The real kubectl, of the same Kubernetes module, for the test of
# deploy/crds/gateway-api/install.sh.
(cd tools/kubernetes && go build -mod=mod -o "$bindir/kubectl" k8s.io/kubernetes/cmd/kubectl)
export TLB_KUBECTL="$bindir/kubectl"
# The real kustomize (tools/go.mod), for the tests that build deploy/.
go build -modfile=tools/go.mod -o "$bindir/kustomize" sigs.k8s.io/kustomize/kustomize/v5
export TLB_KUSTOMIZE="$bindir/kustomize"

# One API server per test package: the IPAM controller, the director and
# netd sources, the L7 controller, the Gateway API controller, and the
# rogue-client suites (which also run the real Envoy: tools/deps.sh).
pkgs=(./integration/k8s/... ./integration/k8sagents/... ./integration/k8sl7/... ./integration/k8sgateway/... ./integration/rogue/...)
go vet -tags k8s "${pkgs[@]}"
go test -tags k8s -count=1 -p 1 -timeout 25m "$@" "${pkgs[@]}"
