#!/usr/bin/env bash
# build.sh builds the envoyproxy/ratelimit service (src/service_cmd) from the
# module proxy at the version pinned in this module's go.mod. The project
# has no tags, so the version is a pseudo-version. The tests of l7/ratelimit
# run it against a private redis-server and call it as Envoy does. The
# binary is cached under ${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/ratelimit/<version>/;
# a cached binary is reused.
#
# It prints the path of the binary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(awk '$1=="require" && $2=="github.com/envoyproxy/ratelimit" {print $3}' "$here/go.mod")"
cache="${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/ratelimit/${version}"
bin="$cache/ratelimit"
if [[ -x "$bin" ]]; then
	echo "$bin"
	exit 0
fi
mkdir -p "$cache"
tmp="$cache/.build"
rm -rf "$tmp" && mkdir -p "$tmp"
echo "building envoyproxy/ratelimit ${version} into $cache (a minute or two)" >&2
(cd "$here" && CGO_ENABLED=0 nice -n 10 go build -mod=mod -trimpath -ldflags='-s -w' \
	-o "$tmp/ratelimit" github.com/envoyproxy/ratelimit/src/service_cmd)
mv "$tmp/ratelimit" "$bin"
rmdir "$tmp"
echo "$bin"
