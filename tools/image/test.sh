#!/bin/sh
# test.sh (make image-test) builds both images twice from the same commit
# and verifies them by reading the tarballs back. The TLB image
# (verify_test.go): binaries present, 0755, static x86-64 ELF that print
# their usage on this host, user 65532, the tag deploy/ names, and one
# digest for both builds. The Envoy image (verify_envoy_test.go): user 101,
# Envoy with setcap's bytes for cap_net_bind_service=ep, the loader and the
# libraries it needs, Envoy started from them in a chroot of the layer as
# 101:101 printing the tagged release (needs root), the tag deploy/envoy
# names, one digest for both builds. Both are built for amd64 and arm64
# (verify_multiarch_test.go): every arm64 binary an arm64 ELF that runs under
# qemu-user, and each multi-architecture index listing both archives by
# their digests. It also runs the unit tests of tools/image.
#
# The second build reuses Go's build cache, so by default it proves the
# image step deterministic. IMAGE_TEST_FRESH_GOCACHE=1 compiles the second
# build from an empty cache (minutes), proving the binaries reproducible too.
set -eu

root=$(git rev-parse --show-toplevel)
cd "$root"
IMAGE_TAG=${IMAGE_TAG:-ghcr.io/tlbproject/tlb:v0.1.0}
out=${IMAGE_TAR:-$root/.cache/image/tlb.tar}
again=$root/.cache/image/tlb-again.tar
envoy_out=${ENVOY_IMAGE_TAR:-$root/.cache/image/envoy.tar}
envoy_again=$root/.cache/image/envoy-again.tar
ENVOY_IMAGE_TAG=ghcr.io/tlbproject/envoy:v$(sed -n 's/^const EnvoyVersion = "\(.*\)"$/\1/p' l7/bootstrap/version.go)
# Both builds take one revision and one time, even if someone commits
# between them.
IMAGE_REVISION=$(git rev-parse HEAD)
git diff --quiet HEAD -- || IMAGE_REVISION="$IMAGE_REVISION-dirty"
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
# Both architectures, as make image builds them: OUT.tar (amd64, the one the
# lab and the Kubernetes tests run), OUT-arm64.tar and the index OUT.oci.tar.
IMAGE_ARCHS="amd64 arm64"
export IMAGE_TAG IMAGE_REVISION SOURCE_DATE_EPOCH IMAGE_ARCHS

./tools/image/build.sh "$out"
if [ "${IMAGE_TEST_FRESH_GOCACHE:-}" = 1 ]; then
	cache=$(mktemp -d)
	trap 'chmod -R u+w "$cache"; rm -rf "$cache"' EXIT
	GOCACHE=$cache ./tools/image/build.sh "$again"
else
	./tools/image/build.sh "$again"
fi
./tools/image/build-envoy.sh "$envoy_out"
./tools/image/build-envoy.sh "$envoy_again"
cd tools
TLB_IMAGE_TAR=$out TLB_IMAGE_TAR_AGAIN=$again TLB_IMAGE_TAG=$IMAGE_TAG \
TLB_ENVOY_IMAGE_TAR=$envoy_out TLB_ENVOY_IMAGE_TAR_AGAIN=$envoy_again TLB_ENVOY_IMAGE_TAG=$ENVOY_IMAGE_TAG \
	go test -count=1 -v ./image/
rm -f "$again" "$envoy_again" "${again%.tar}-arm64.tar" "${again%.tar}.oci.tar" \
	"${envoy_again%.tar}-arm64.tar" "${envoy_again%.tar}.oci.tar"
