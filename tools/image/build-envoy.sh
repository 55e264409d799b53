#!/bin/sh
# build-envoy.sh builds the Envoy image deploy/envoy runs
# (ghcr.io/tlbproject/envoy:v<l7/bootstrap.EnvoyVersion>) without a Docker
# engine: the official Envoy binary tools/deps.sh unpacked, with the file
# capability cap_net_bind_service=ep, plus the dynamic loader and the
# libraries Envoy needs (Debian's libc6: this machine's for amd64, the
# arm64 package deps.sh unpacked for arm64), written by tools/image as a
# docker-archive tarball per architecture of IMAGE_ARCHS (default amd64).
#
#   tools/image/build-envoy.sh OUT.tar
#
# As build.sh: the first architecture's image is OUT.tar, the others
# OUT-ARCH.tar, and with more than one the multi-architecture index is
# OUT.oci.tar. The arm64 Envoy's --version runs under qemu-aarch64-static.
#
# SOURCE_DATE_EPOCH (default: the commit time of HEAD) fixes every time in
# it, so two builds of one commit on one machine give one digest. The
# layer's history names IMAGE_REVISION, by default HEAD with "-dirty" when
# the work tree has changes.
set -eu

out=${1:?usage: tools/image/build-envoy.sh OUT.tar}
archs=${IMAGE_ARCHS:-amd64}
root=$(git rev-parse --show-toplevel)
cd "$root"
case $out in /*) ;; *) out=$root/$out ;; esac

version=$(sed -n 's/^const EnvoyVersion = "\(.*\)"$/\1/p' l7/bootstrap/version.go)
[ -n "$version" ] || { echo "build-envoy: no EnvoyVersion in l7/bootstrap/version.go" >&2; exit 1; }
cache=${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}
tag=ghcr.io/tlbproject/envoy:v$version
libc=$(dpkg-query -W -f='${Version}' libc6)

rev=${IMAGE_REVISION:-}
if [ -z "$rev" ]; then
	rev=$(git rev-parse HEAD)
	git diff --quiet HEAD -- || rev="$rev-dirty"
fi
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH

first=
tars=
for arch in $archs; do
	case $arch in
	amd64)
		envoy=$cache/envoy/$version/envoy
		set -- --root / --lib-dirs /lib/x86_64-linux-gnu,/usr/lib/x86_64-linux-gnu
		;;
	arm64)
		envoy=$cache/envoy/$version/arm64/envoy
		libroot=$cache/libc6-arm64/$libc/root
		[ -d "$libroot" ] || { echo "build-envoy: no libc6 $libc for arm64 at $libroot: run tools/deps.sh" >&2; exit 1; }
		set -- --root "$libroot" --lib-dirs /lib/aarch64-linux-gnu,/usr/lib/aarch64-linux-gnu --emulator qemu-aarch64-static
		;;
	*)
		echo "build-envoy: architecture $arch: the images are built for amd64 and arm64" >&2
		exit 1
		;;
	esac
	[ -x "$envoy" ] || { echo "build-envoy: no Envoy $version for $arch at $envoy: run tools/deps.sh" >&2; exit 1; }
	if [ -z "$first" ]; then
		first=$arch
		tar=$out
	else
		tar=${out%.tar}-$arch.tar
	fi
	(cd tools && go run ./image envoy --arch "$arch" "$@" --envoy "$envoy" --out "$tar" --tag "$tag" \
		--revision "$rev" --libc-version "$libc" --notices /usr/share/doc/libc6/copyright)
	tars="$tars $tar"
done
if [ "$first" != "$archs" ]; then
	# shellcheck disable=SC2086 # one argument per tarball
	(cd tools && go run ./image index --out "${out%.tar}.oci.tar" --tag "$tag" $tars)
fi
