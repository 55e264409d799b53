#!/usr/bin/env bash
# build.sh builds kube-apiserver from the module proxy (k8s.io/kubernetes at
# the version pinned in this module's go.mod) and caches the binary under
# ${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/k8s/<version>/. It prints the path of
# the binary. A cached binary is reused; the build takes minutes, not seconds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$here/go.mod")"
cache="${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/k8s/${version}"
bin="$cache/kube-apiserver"
if [[ -x "$bin" ]] && "$bin" --version >/dev/null 2>&1; then
	echo "$bin"
	exit 0
fi
mkdir -p "$cache"
echo "building kube-apiserver ${version} into $cache (several minutes)" >&2
(cd "$here" && nice -n 10 go build -mod=mod -trimpath -ldflags='-s -w' \
	-o "$bin.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
mv "$bin.tmp" "$bin"
echo "$bin"
