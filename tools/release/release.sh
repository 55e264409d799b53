#!/bin/sh
# release.sh makes release VERSION of the commit HEAD, which must carry the
# git tag VERSION (docs/releasing.md): the images for amd64 and arm64
# (make image, tagged VERSION) and the manifests pinning them by digest,
# deploy/releases/VERSION/tlb.yaml, committed after the tag so that the
# next release's upgrade is written and tested against them.
#
#   git tag -a v0.2.0 -m "TLB v0.2.0" && tools/release/release.sh v0.2.0
#
# REDIS_DIGEST and RATELIMIT_DIGEST (sha256:...) are required: the digests
# of the Redis and rate limit images deploy/envoy names, looked up in their
# registry (crane digest redis:7.4.2-alpine). The Envoy image keeps the
# digest of the previous release when the Envoy version did not change:
# its new build would differ only in the commit its history names, and a
# new digest would restart every Envoy for nothing. It prints what to push
# and whether the upgrade from the previous release restarts Envoy.
set -eu

version=${1:?usage: tools/release/release.sh vX.Y.Z}
root=$(git rev-parse --show-toplevel)
cd "$root"
echo "$version" | grep -Eq '^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$' ||
	{ echo "release: $version: want vMAJOR.MINOR.PATCH" >&2; exit 1; }
[ "$(git describe --exact-match --tags HEAD 2>/dev/null)" = "$version" ] ||
	{ echo "release: HEAD is not tagged $version (git tag -a $version first): the binaries take their version from the tag" >&2; exit 1; }
git diff --quiet HEAD -- || { echo "release: the work tree has changes" >&2; exit 1; }
: "${REDIS_DIGEST:?set REDIS_DIGEST to the digest of deploy/envoy/redis.yaml's image}"
: "${RATELIMIT_DIGEST:?set RATELIMIT_DIGEST to the digest of deploy/envoy/ratelimit.yaml's image}"
export REDIS_DIGEST RATELIMIT_DIGEST

out=$root/.cache/release/$version
mkdir -p "$out"
index_digest() { awk '$1 == "index" && $2 ~ /^sha256:/ {print $2}'; }
tlb=$(IMAGE_TAG=ghcr.io/tlbproject/tlb:$version IMAGE_ARCHS="amd64 arm64" ./tools/image/build.sh "$out/tlb.tar" | index_digest)
envoy=$(IMAGE_ARCHS="amd64 arm64" ./tools/image/build-envoy.sh "$out/envoy.tar" | index_digest)
[ -n "$tlb" ] && [ -n "$envoy" ] || { echo "release: no index digest in the image builds' output" >&2; exit 1; }

envoy_version=$(sed -n 's/^const EnvoyVersion = "\(.*\)"$/\1/p' l7/bootstrap/version.go)
previous=$(ls deploy/releases 2>/dev/null | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -n 1 || true)
if [ -n "$previous" ]; then
	kept=$(sed -n "s|.*image: ghcr.io/tlbproject/envoy:v$envoy_version@\(sha256:[0-9a-f]*\).*|\1|p" "deploy/releases/$previous/tlb.yaml" | head -n 1)
	if [ -n "$kept" ]; then
		echo "release: Envoy $envoy_version as in $previous: keeping its image $kept (this build: $envoy)" >&2
		envoy=$kept
	fi
fi
mkdir -p "deploy/releases/$version"
./tools/release/render.sh "$version" "$tlb" "$envoy" "deploy/releases/$version/tlb.yaml" >/dev/null

echo "release $version"
echo "  tlb   ghcr.io/tlbproject/tlb:$version@$tlb"
echo "  envoy ghcr.io/tlbproject/envoy:v$envoy_version@$envoy"
echo "  manifests deploy/releases/$version/tlb.yaml (commit them)"
if [ -n "$previous" ]; then
	if ./tools/release/restarts.sh "deploy/releases/$previous/tlb.yaml" "deploy/releases/$version/tlb.yaml"; then
		echo "  upgrade from $previous: Envoy keeps running (its DaemonSets are unchanged)"
	else
		echo "  upgrade from $previous: RESTARTS Envoy (say so in CHANGELOG.md and docs/upgrading.md)"
	fi
fi
echo "push: skopeo copy --all oci-archive:$out/tlb.oci.tar docker://ghcr.io/tlbproject/tlb:$version"
[ -n "${kept:-}" ] || echo "      skopeo copy --all oci-archive:$out/envoy.oci.tar docker://ghcr.io/tlbproject/envoy:v$envoy_version"
