#!/usr/bin/env bash
# deps.sh installs everything the demo and the tests need on a fresh Debian
# machine, and is quick when it is all there already:
#   - Debian packages (qemu, busybox-static, kmod, cpio, ipvsadm, iproute2,
#     bird2, etcd-server, runc and the CNI plugins for the lab node,
#     prometheus for promtool, chromium for the console's lab test, ...);
#   - Debian's stock kernel, fetched with apt-get download and unpacked into
#     the lab cache (never installed), resolved through linux-image-amd64;
#   - Go modules (go mod download).
set -euo pipefail

PKGS=(qemu-system-x86 busybox-static kmod cpio ipvsadm iproute2 bird2
      etcd-server nftables curl openssl procps psmisc redis-server
      runc containernetworking-plugins util-linux prometheus chromium)
CACHE=${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian packages start their own daemons where an init system runs; the
# tests run their own instances per namespace, so stop the packaged ones.
for svc in bird etcd redis-server prometheus; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    systemctl stop "$svc" || true
  fi
done

# The lab kernel: resolve the current flavour through the metapackage.
mkdir -p "$CACHE"
if [ ! -f "$CACHE/kernel/ready" ]; then
  apt-get update -qq
  image=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  [ -n "$image" ] || { echo "deps: cannot resolve linux-image-amd64" >&2; exit 1; }
  echo "deps: fetching $image for the lab" >&2
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download "$image" >/dev/null)
  rm -rf "$CACHE/kernel.new" && mkdir -p "$CACHE/kernel.new/root"
  dpkg-deb -x "$tmp"/*.deb "$CACHE/kernel.new/root"
  rm -rf "$tmp"
  version=$(ls "$CACHE/kernel.new/root/lib/modules" | head -n1)
  depmod -b "$CACHE/kernel.new/root" "$version"
  echo "$version" > "$CACHE/kernel.new/version"
  touch "$CACHE/kernel.new/ready"
  rm -rf "$CACHE/kernel" && mv "$CACHE/kernel.new" "$CACHE/kernel"
fi

# Go modules.
cd "$(dirname "$0")/.."
go mod download
