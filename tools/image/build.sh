#!/bin/sh
# build.sh builds the TLB container image without a Docker engine: the four
# static binaries (CGO off, -trimpath, stripped) into a temporary directory,
# then tools/image writes them as a docker-archive tarball, one per
# architecture of IMAGE_ARCHS (default amd64; make image builds
# "amd64 arm64").
#
#   tools/image/build.sh OUT.tar
#
# The first architecture's image is OUT.tar, each other's OUT-ARCH.tar
# (OUT-arm64.tar); with more than one, tools/image joins them in one
# multi-architecture index, written as the OCI image layout tarball
# OUT.oci.tar (its digest is the one release manifests pin).
#
# IMAGE_TAG (default ghcr.io/tlbproject/tlb:v0.1.0) names the image;
# SOURCE_DATE_EPOCH (default: the commit time of HEAD) fixes every time in
# it, so two builds of one commit give one digest. The revision label is
# IMAGE_REVISION, by default HEAD with "-dirty" when the work tree has
# changes.
set -eu

out=${1:?usage: tools/image/build.sh OUT.tar}
tag=${IMAGE_TAG:-ghcr.io/tlbproject/tlb:v0.1.0}
archs=${IMAGE_ARCHS:-amd64}
root=$(git rev-parse --show-toplevel)
cd "$root"
case $out in /*) ;; *) out=$root/$out ;; esac

rev=${IMAGE_REVISION:-}
if [ -z "$rev" ]; then
	rev=$(git rev-parse HEAD)
	git diff --quiet HEAD -- || rev="$rev-dirty"
fi
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
first=
tars=
for arch in $archs; do
	if [ -z "$first" ]; then
		first=$arch
		tar=$out
	else
		tar=${out%.tar}-$arch.tar
	fi
	# -buildvcs=true: the commit goes into each binary (their --version
	# prints it); these machines set GOFLAGS=-buildvcs=false.
	mkdir -p "$bin/$arch"
	CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -buildvcs=true -trimpath -ldflags='-s -w' -o "$bin/$arch/" \
		./tlb/cmd/tlb ./netd/cmd/netd ./l7/cmd/l7 ./ipam/cmd/ipam
	(cd tools && go run ./image --arch "$arch" --bin "$bin/$arch" --binaries tlb,netd,l7,ipam --out "$tar" --tag "$tag" --revision "$rev")
	tars="$tars $tar"
done
if [ "$first" != "$archs" ]; then
	# shellcheck disable=SC2086 # one argument per tarball
	(cd tools && go run ./image index --out "${out%.tar}.oci.tar" --tag "$tag" $tars)
fi
