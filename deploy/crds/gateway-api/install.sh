#!/usr/bin/env bash
# install.sh installs the Gateway API CRDs TLB serves (the YAML files
# beside it) only where the cluster has none or an older one: for each
# CRD it compares the annotation gateway.networking.k8s.io/bundle-version
# of the cluster's copy with ours, and applies ours only when the cluster
# has no such CRD or an older version of the same channel. A newer
# version, the experimental channel, or a CRD without a bundle version
# (installed by someone else) is kept and reported. It never deletes.
#
# Usage: deploy/crds/gateway-api/install.sh [--dry-run]
# KUBECTL names the kubectl to run (default kubectl); its usual flags
# and KUBECONFIG apply.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kubectl="${KUBECTL:-kubectl}"
dry=""
if [[ "${1:-}" == "--dry-run" ]]; then
	dry="--dry-run=server"
fi

# older A B: A is an older version than B (v1.5.1 < v1.6.3).
older() {
	[[ "$1" != "$2" && "$(printf '%s\n%s\n' "${1#v}" "${2#v}" | sort -V | head -n1)" == "${1#v}" ]]
}

# annotation FILE KEY prints the value of one annotation of a CRD file.
annotation() {
	sed -n "s|^    $2: *||p" "$1" | head -n1
}

for f in "$here"/gateway.networking.k8s.io_*.yaml; do
	name="$(sed -n 's|^  name: *||p' "$f" | head -n1)"
	ours="$(annotation "$f" gateway.networking.k8s.io/bundle-version)"
	channel="$(annotation "$f" gateway.networking.k8s.io/channel)"
	got="$("$kubectl" get crd "$name" --ignore-not-found -o \
		'jsonpath={.metadata.name}|{.metadata.annotations.gateway\.networking\.k8s\.io/bundle-version}|{.metadata.annotations.gateway\.networking\.k8s\.io/channel}')"
	theirs="$(cut -d'|' -f2 <<<"$got")"
	their_channel="$(cut -d'|' -f3 <<<"$got")"
	if [[ -z "$got" ]]; then
		echo "$name: absent, installing $ours ($channel)"
	elif [[ -z "$theirs" ]]; then
		echo "$name: kept, the cluster's copy has no bundle version (installed by someone else); TLB needs $ours or newer"
		continue
	elif [[ "$their_channel" != "$channel" ]]; then
		echo "$name: kept, the cluster runs $theirs ($their_channel); TLB needs $ours or newer"
		continue
	elif older "$theirs" "$ours"; then
		echo "$name: $theirs is older, upgrading to $ours ($channel)"
	else
		echo "$name: kept, the cluster runs $theirs ($their_channel)"
		continue
	fi
	# Server-side: the largest CRDs exceed the client-side apply annotation.
	"$kubectl" apply --server-side --force-conflicts --field-manager=tlb-gateway-api-crds $dry -f "$f"
	if [[ -z "$dry" ]]; then
		"$kubectl" wait --for=condition=Established --timeout=60s "crd/$name"
	fi
done
