#!/bin/sh
# build.sh builds the TLB container image without a Docker engine: the four
# static binaries (CGO off, -trimpath, stripped) into a temporary directory,
# then tools/image writes them as a docker-archive tarball.
#
#   tools/image/build.sh OUT.tar
#
# IMAGE_TAG (default ghcr.io/tlbproject/tlb:v0.1.0) names the image;
# SOURCE_DATE_EPOCH (default: the commit time of HEAD) fixes every time in
# it, so two builds of one commit give one digest. The revision label is
# IMAGE_REVISION, by default HEAD with "-dirty" when the work tree has
# changes.
set -eu

out=${1:?usage: tools/image/build.sh OUT.tar}
tag=${IMAGE_TAG:-ghcr.io/tlbproject/tlb:v0.1.0}
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

# -buildvcs=true: the commit goes into each binary (their --version prints
# it); these machines set GOFLAGS=-buildvcs=false.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -buildvcs=true -trimpath -ldflags='-s -w' -o "$bin/" \
	./tlb/cmd/tlb ./netd/cmd/netd ./l7/cmd/l7 ./ipam/cmd/ipam

cd tools
go run ./image --bin "$bin" --binaries tlb,netd,l7,ipam --out "$out" --tag "$tag" --revision "$rev"
