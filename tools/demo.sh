#!/usr/bin/env bash
# demo.sh builds TLB's binaries and the demo on the host, boots the lab VM
# (Debian's kernel under qemu) and runs the demo inside it. Envoy is the
# binary tools/deps.sh put in the lab cache (make demo runs it first).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(pwd)/.cache/lab/bin"
mkdir -p "$bin"
go build -o "$bin/" ./tlb/cmd/tlb ./netd/cmd/netd ./l7/cmd/l7 ./integration/cmd/demo ./integration/cmd/labrun
echo "Booting the lab VM (Debian kernel under qemu; about 10-30 s)..."
exec "$bin/labrun" -timeout 10m -mem 3072 -env "TLB_BIN_DIR=$bin" -- "$bin/demo" "$@"
