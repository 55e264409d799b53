#!/bin/sh
# build-envoy.sh builds the Envoy image deploy/envoy runs
# (ghcr.io/tlbproject/envoy:v<l7/bootstrap.EnvoyVersion>) without a Docker
# engine: the official Envoy binary tools/deps.sh unpacked, with the file
# capability cap_net_bind_service=ep, plus this machine's dynamic loader and
# the libraries Envoy needs (Debian's libc6), written by tools/image as a
# docker-archive tarball.
#
#   tools/image/build-envoy.sh OUT.tar
#
# SOURCE_DATE_EPOCH (default: the commit time of HEAD) fixes every time in
# it, so two builds of one commit on one machine give one digest. The
# layer's history names IMAGE_REVISION, by default HEAD with "-dirty" when
# the work tree has changes.
set -eu

out=${1:?usage: tools/image/build-envoy.sh OUT.tar}
root=$(git rev-parse --show-toplevel)
cd "$root"
case $out in /*) ;; *) out=$root/$out ;; esac

version=$(sed -n 's/^const EnvoyVersion = "\(.*\)"$/\1/p' l7/bootstrap/version.go)
[ -n "$version" ] || { echo "build-envoy: no EnvoyVersion in l7/bootstrap/version.go" >&2; exit 1; }
envoy=${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/envoy/$version/envoy
[ -x "$envoy" ] || { echo "build-envoy: no Envoy $version at $envoy: run tools/deps.sh" >&2; exit 1; }

rev=${IMAGE_REVISION:-}
if [ -z "$rev" ]; then
	rev=$(git rev-parse HEAD)
	git diff --quiet HEAD -- || rev="$rev-dirty"
fi
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH

cd tools
go run ./image envoy --envoy "$envoy" --out "$out" --tag "ghcr.io/tlbproject/envoy:v$version" \
	--revision "$rev" --libc-version "$(dpkg-query -W -f='${Version}' libc6)" \
	--notices /usr/share/doc/libc6/copyright
