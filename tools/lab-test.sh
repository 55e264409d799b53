#!/usr/bin/env bash
# lab-test.sh compiles the lab tests (files *_lab_test.go, build tag "lab",
# in packages under integration/) and the project's binaries on the host,
# then boots the lab VM once and runs every test binary inside it as root.
#
#   tools/lab-test.sh                     # every lab package
#   tools/lab-test.sh ./integration/l4    # some of them
#   LAB_RUN='TestName' tools/lab-test.sh  # only matching tests
#   TLB_KUBEPROXY_WINDOW=5m LAB_RUN=TestKubeProxyModes tools/lab-test.sh ./integration/e2e
#                                         # the 5-minute kube-proxy soak
#
# Files the tests print as TLB-ARTIFACT lines (the console's screenshots)
# are saved under ${LAB_ARTIFACTS:-.cache/lab/artifacts}/TEST/NAME.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# Each run has its own directory, so that runs side by side don't clobber
# each other's binaries.
mkdir -p "$root/.cache/lab"
out=$(mktemp -d "$root/.cache/lab/run-XXXXXX")
trap 'rm -rf "$out"' EXIT
bin="$out/bin"
mkdir -p "$bin" "$out/tests"

if [ $# -gt 0 ]; then
  pkgs=("$@")
else
  mapfile -t pkgs < <(grep -l '^//go:build lab' $(find integration -name '*_lab_test.go' 2>/dev/null) 2>/dev/null | xargs -r -n1 dirname | sort -u | sed 's|^|./|')
fi
if [ ${#pkgs[@]} -eq 0 ]; then
  echo "lab-test: no lab test packages found" >&2
  exit 1
fi

# The binaries the tests run inside nodes (tlb, netd, ...).
mapfile -t cmds < <(go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./tlb/... ./netd/... ./bgp/... ./ipam/... ./l7/cmd/l7 2>/dev/null | grep -v '^$' || true)
if [ ${#cmds[@]} -gt 0 ]; then
  go build -o "$bin/" "${cmds[@]}"
fi

runner="$out/tests/run.sh"
{
  echo 'pass=0; fail=0; failed=""'
  for p in "${pkgs[@]}"; do
    name=$(echo "${p#./}" | tr '/' '_')
    go test -c -tags lab -o "$out/tests/$name.test" "$p"
    dir=$(cd "$p" && pwd)
    cat <<RUN
echo "=== lab package $p"
cd '$dir'
began=\$(date +%s); cpu0=\$(head -n1 /proc/stat)
if '$out/tests/$name.test' -test.v -test.count=1 -test.timeout=60m ${LAB_RUN:+-test.run '$LAB_RUN'}; then
  pass=\$((pass+1)); verdict=ok
else
  fail=\$((fail+1)); failed="\$failed $p"; verdict=FAIL
  # A test binary killed from outside is most often the VM's OOM killer.
  dmesg | grep -iE 'out of memory|killed process' | tail -5
fi
# The guest's CPUs' idle share: room the host had for other work meanwhile.
idle=\$(printf '%s\\n%s\\n' "\$cpu0" "\$(head -n1 /proc/stat)" | awk '{t=0; for (i=2; i<=NF; i++) t+=\$i; tot[NR]=t; idl[NR]=\$5+\$6} END {if (tot[2]>tot[1]) printf "%d", 100*(idl[2]-idl[1])/(tot[2]-tot[1])}')
echo "lab package $p: \$verdict in \$((\$(date +%s) - began))s, guest CPUs idle \${idle}%"
RUN
  done
  echo 'echo "lab packages: $pass passed, $fail failed${failed:+ ($failed )}"'
  echo '[ "$fail" -eq 0 ]'
} > "$runner"

# The end-to-end tests run a real kube-apiserver and Debian's etcd inside
# the VM; the node test adds kube-controller-manager, kube-scheduler and,
# per node, a kubelet and containerd (all built once from the module proxy
# and cached), Debian's runc and CNI plugins, and runs deploy/ (the real
# kustomize build) in pods of the images `make image` builds (tlb, and
# Envoy for the gateway pods).
kube_apiserver=$(./tools/kubernetes/build.sh)
containerd_dir=$(./tools/containerd/build.sh)
./tools/image/build.sh "$out/tlb.tar" >/dev/null
./tools/image/build-envoy.sh "$out/envoy.tar" >/dev/null
# The upgrade part of TestDeployOnRealNodes installs the newest release
# (deploy/releases) with its image built again from its commit, then
# upgrades to this tree's: the lab has no registry to pull it from.
previous=()
if printf '%s\n' "${pkgs[@]}" | grep -qx './integration/e2e'; then
  prev=$(./tools/release/previous.sh "$out/previous.tar")
  read -r prev_version prev_manifests <<<"$prev"
  previous=(-env "TLB_PREVIOUS_VERSION=$prev_version" -env "TLB_PREVIOUS_MANIFESTS=$prev_manifests"
    -env "TLB_PREVIOUS_IMAGE_TAR=$out/previous.tar")
fi
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$out/pause/" ./integration/cmd/pause
(cd tools && go run ./image --bin "$out/pause" --binaries pause --out "$out/pause.tar" \
  --tag tlb.lab/pause:1 --revision lab --source-date-epoch 0 >/dev/null)
go build -modfile=tools/go.mod -o "$bin/kustomize" sigs.k8s.io/kustomize/kustomize/v5
go build -o "$bin/labrun" ./integration/cmd/labrun
echo "lab-test: built the tests, binaries and images in $SECONDS s" >&2
# On a machine shared by several checkouts, TLB_LAB_LOCK names a lock file
# that serialises the VM runs (each VM takes LAB_MEM of memory); building
# above needs no lock. The wait is printed so that timings can discount it.
if [ -n "${TLB_LAB_LOCK:-}" ]; then
  exec 9>"$TLB_LAB_LOCK"
  waited=$SECONDS
  flock 9
  echo "lab-test: waited $((SECONDS - waited)) s for $TLB_LAB_LOCK" >&2
fi
echo "lab-test: booting the VM" >&2
artifacts="${LAB_ARTIFACTS:-$root/.cache/lab/artifacts}"
mkdir -p "$artifacts"
"$bin/labrun" -artifacts "$artifacts" -mem "${LAB_MEM:-10240}" -timeout "${LAB_TIMEOUT:-80m}" -env "TLB_BIN_DIR=$bin" \
  -env "TLB_KUBE_APISERVER=$kube_apiserver" -env "TLB_ETCD=${TLB_ETCD:-/usr/bin/etcd}" \
  -env "TLB_CONTAINERD_DIR=$containerd_dir" -env "TLB_IMAGE_TAR=$out/tlb.tar" \
  -env "TLB_ENVOY_IMAGE_TAR=$out/envoy.tar" \
  -env "TLB_PAUSE_TAR=$out/pause.tar" -env "TLB_KUSTOMIZE=$bin/kustomize" "${previous[@]}" \
  ${TLB_KUBEPROXY_WINDOW:+-env "TLB_KUBEPROXY_WINDOW=$TLB_KUBEPROXY_WINDOW"} -- sh "$runner"
