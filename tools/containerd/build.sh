#!/usr/bin/env bash
# build.sh builds the container runtime of the lab VM's Kubernetes nodes
# from the module proxy: containerd, containerd-shim-runc-v2 and ctr at the
# version pinned in this module's go.mod. Debian 12's containerd (1.6) is too
# old for the kubelet of Kubernetes 1.37, which supports containerd 2.3 and
# 2.4 (containerd's RELEASES.md); runc and the CNI plugins come from Debian.
# The binaries are cached under
# ${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/containerd/<version>/; a cached set
# is reused. It prints that directory.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(awk '$1=="require" && $2=="github.com/containerd/containerd/v2" {print $3}' "$here/go.mod")"
cache="${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/containerd/${version}"
bins=(containerd containerd-shim-runc-v2 ctr)
# One build at a time per version (checkouts side by side), each in a
# directory of its own.
mkdir -p "$cache"
exec 9>"$cache.lock"
flock 9
complete=1
for b in "${bins[@]}"; do [[ -x "$cache/$b" ]] || complete=0; done
if [[ $complete == 1 ]]; then
	echo "$cache"
	exit 0
fi
tmp="$(mktemp -d "$cache/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "building containerd ${version} into $cache (a few minutes)" >&2
pkg=github.com/containerd/containerd/v2/cmd
# Static, without the snapshotters that need C libraries (the lab uses the
# overlayfs snapshotter), as containerd's own static release is built.
(cd "$here" && CGO_ENABLED=0 nice -n 10 go build -mod=mod -trimpath \
	-tags 'urfave_cli_no_docs no_btrfs no_devmapper no_zfs osusergo netgo static_build' \
	-ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=${version}" \
	-o "$tmp/" "$pkg/containerd" "$pkg/containerd-shim-runc-v2" "$pkg/ctr")
for b in "${bins[@]}"; do mv "$tmp/$b" "$cache/$b"; done
echo "$cache"
