#!/usr/bin/env bash
# demo.sh builds TLB's binaries and the demo on the host, boots the lab VM
# (Debian's kernel under qemu) and runs the demo inside it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(pwd)/.cache/lab/bin"
mkdir -p "$bin"
go build -o "$bin/" ./tlb/cmd/tlb ./netd/cmd/netd ./integration/cmd/demo ./integration/cmd/labrun
echo "Booting the lab VM (Debian kernel under qemu; about 10-30 s)..."
exec "$bin/labrun" -timeout 10m -env "TLB_BIN_DIR=$bin" -- "$bin/demo" "$@"
