#!/bin/sh
# render.sh writes the manifests of a release: the kustomize build of
# deploy/ (the L4 tier and the gateway group of deploy/site's defaults; not
# the Gateway API CRDs, which deploy/crds/gateway-api/install.sh installs)
# with every image pinned by the digest of its multi-architecture index.
# Its header holds the kustomize images: lines, for a site that builds its
# own overlay of deploy/ at the release's tag (docs/upgrading.md).
#
#   tools/release/render.sh VERSION TLB_DIGEST ENVOY_DIGEST OUT.yaml
#
# VERSION is vX.Y.Z; the digests are sha256:<64 hex> (tools/release/release.sh
# reads them from the indexes make image writes). The tlb image becomes
# ghcr.io/tlbproject/tlb:VERSION@TLB_DIGEST, the Envoy image
# ghcr.io/tlbproject/envoy:v<EnvoyVersion>@ENVOY_DIGEST: a node runs exactly
# the bytes that were released, whatever the tags later point at.
# REDIS_DIGEST and RATELIMIT_DIGEST, when set, pin the two third-party
# images (Redis, envoyproxy/ratelimit) by digest too, keeping their tags.
# KUSTOMIZE names the kustomize binary (default: built from tools/go.mod).
set -eu

usage() { echo "usage: tools/release/render.sh vX.Y.Z sha256:TLB sha256:ENVOY OUT.yaml" >&2; exit 2; }
[ $# -eq 4 ] || usage
version=$1 tlb=$2 envoy=$3 out=$4
echo "$version" | grep -Eq '^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$' ||
	{ echo "render: version $version: want vMAJOR.MINOR.PATCH (semantic version, no suffix)" >&2; exit 1; }
for d in "$tlb" "$envoy"; do
	echo "$d" | grep -Eq '^sha256:[0-9a-f]{64}$' || { echo "render: digest $d: want sha256: and 64 hex digits" >&2; exit 1; }
done
root=$(git rev-parse --show-toplevel)
cd "$root"
case $out in /*) ;; *) out=$root/$out ;; esac
envoy_version=$(sed -n 's/^const EnvoyVersion = "\(.*\)"$/\1/p' l7/bootstrap/version.go)
[ -n "$envoy_version" ] || { echo "render: no EnvoyVersion in l7/bootstrap/version.go" >&2; exit 1; }

kustomize=${KUSTOMIZE:-}
if [ -z "$kustomize" ]; then
	kustomize=$root/.cache/release/bin/kustomize
	go build -modfile=tools/go.mod -o "$kustomize" sigs.k8s.io/kustomize/kustomize/v5
fi
# kustomize takes no absolute resource paths: the overlay lives under the
# repository, removed on exit.
mkdir -p "$root/.cache/release"
dir=$(mktemp -d "$root/.cache/release/render-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cat >"$dir/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../../deploy
images:
  - {name: ghcr.io/tlbproject/tlb, newTag: $version, digest: $tlb}
  - {name: ghcr.io/tlbproject/envoy, newTag: v$envoy_version, digest: $envoy}
YAML
# The third-party images (Redis, the rate limit service) when their
# digests are given: release.sh requires them, tests leave them out.
for pin in "redis=${REDIS_DIGEST:-}" "envoyproxy/ratelimit=${RATELIMIT_DIGEST:-}"; do
	[ -n "${pin#*=}" ] || continue
	echo "${pin#*=}" | grep -Eq '^sha256:[0-9a-f]{64}$' || { echo "render: digest of ${pin%%=*} ${pin#*=}: want sha256: and 64 hex digits" >&2; exit 1; }
	echo "  - {name: ${pin%%=*}, digest: ${pin#*=}}" >>"$dir/kustomization.yaml"
done
{
	echo "# TLB $version: deploy/ with images pinned by digest (tools/release/render.sh)."
	echo "# Apply after the Gateway API CRDs (deploy/crds/gateway-api/install.sh); docs/upgrading.md."
	# The commit the images were built from: the upgrade lab test builds
	# this release's image again from it (tools/release/previous.sh).
	echo "# Source: commit $(git rev-parse HEAD)"
	echo "# A site overlay of deploy/ at tag $version pins the same images with:"
	sed -n '/^images:/,$p' "$dir/kustomization.yaml" | sed 's/^/#   /'
	"$kustomize" build "$dir"
} >"$out.tmp"
# Every TLB image pinned: a name without its digest would run whatever
# its tag names at the time a node pulls it.
if grep -E 'image: ghcr\.io/tlbproject/' "$out.tmp" | grep -v '@sha256:' >&2; then
	rm -f "$out.tmp"
	echo "render: the lines above name a TLB image without its digest" >&2
	exit 1
fi
mv "$out.tmp" "$out"
echo "$out"
