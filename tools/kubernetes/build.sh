#!/usr/bin/env bash
# build.sh builds the Kubernetes binaries the tests run from the module proxy
# (k8s.io/kubernetes at the version pinned in this module's go.mod): the
# API-server tests need kube-apiserver; the node in the lab VM also needs
# kube-controller-manager, kube-scheduler and kubelet, and the kube-proxy
# tests kube-proxy. All five come from one
# `go build`, so the packages they share compile once. They are cached under
# ${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/k8s/<version>/; a cached set is
# reused. The build takes minutes, not seconds.
#
# It prints the path of kube-apiserver (the other binaries sit beside it).
set -euo pipefail
# Several checkouts may build at once (helpers, CI beside a developer): one
# build at a time per version, under a lock, each in a directory of its own.
here="$(cd "$(dirname "$0")" && pwd)"
version="$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$here/go.mod")"
cache="${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/k8s/${version}"
bins=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
mkdir -p "$cache"
exec 9>"$cache.lock"
flock 9
complete=1
for b in "${bins[@]}"; do
	if ! [[ -x "$cache/$b" ]] || ! "$cache/$b" --version >/dev/null 2>&1; then
		complete=0
	fi
done
if [[ $complete == 1 ]]; then
	echo "$cache/kube-apiserver"
	exit 0
fi
tmp="$(mktemp -d "$cache/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "building ${bins[*]} ${version} into $cache (several minutes)" >&2
pkgs=()
for b in "${bins[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
(cd "$here" && nice -n 10 go build -mod=mod -trimpath -ldflags='-s -w' \
	-o "$tmp/" "${pkgs[@]}")
for b in "${bins[@]}"; do mv "$tmp/$b" "$cache/$b"; done
echo "$cache/kube-apiserver"
