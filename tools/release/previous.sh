#!/bin/sh
# previous.sh builds the tlb image of the newest release kept in
# deploy/releases (docs/releasing.md) from the commit its manifests name
# ("# Source: commit ..."), as make image builds one architecture (amd64),
# named ghcr.io/tlbproject/tlb:VERSION, into OUT.tar, for the lab's upgrade
# test (TestDeployOnRealNodes, docs/upgrading.md "Proven by"), which installs
# that release with it and upgrades to the work tree's build: the lab has
# no registry to pull the released image from. It prints "VERSION MANIFESTS".
#
#   tools/release/previous.sh OUT.tar
#
# The build runs in a throwaway clone sharing this repository's objects,
# with the release's tag set there, so the binaries say the release's
# version as the released ones do. A clone without the commit (a shallow
# one) fails with a message naming it.
set -eu

out=${1:?usage: tools/release/previous.sh OUT.tar}
root=$(git rev-parse --show-toplevel)
cd "$root"
case $out in /*) ;; *) out=$root/$out ;; esac
version=$(ls deploy/releases 2>/dev/null | grep -E '^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$' | sort -V | tail -n 1 || true)
[ -n "$version" ] || { echo "previous: no release under deploy/releases" >&2; exit 1; }
manifests=$root/deploy/releases/$version/tlb.yaml
commit=$(sed -n 's/^# Source: commit \([0-9a-f]\{40\}\)$/\1/p' "$manifests")
[ -n "$commit" ] || { echo "previous: $manifests names no source commit (# Source: commit ...)" >&2; exit 1; }
git cat-file -e "$commit^{commit}" 2>/dev/null ||
	{ echo "previous: commit $commit of $version is not in this clone (a shallow clone? git fetch --unshallow)" >&2; exit 1; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
git clone -q --shared --no-checkout "$root" "$dir/src"
git -C "$dir/src" -c advice.detachedHead=false checkout -q "$commit"
git -C "$dir/src" tag -f "$version" "$commit" >/dev/null
(cd "$dir/src" && IMAGE_TAG="ghcr.io/tlbproject/tlb:$version" ./tools/image/build.sh "$out" >&2)
echo "$version $manifests"
