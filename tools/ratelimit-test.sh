#!/usr/bin/env bash
# ratelimit-test.sh runs the tests of the global rate limit path (build tag
# ratelimit) against the real envoyproxy/ratelimit service and a private
# redis-server, both started by the tests on loopback, and, through two real
# Envoys (integration/l7envoy/authz; Envoy from tools/deps.sh), the limit
# shared by two gateways. The service is built
# once from the module proxy and cached under
# ${TLB_LAB_CACHE:-$HOME/.cache/tlb-lab}/ratelimit/<version>/; redis-server
# comes from the Debian package (tools/deps.sh). Extra arguments go to
# `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null; then
	echo "ratelimit-test: redis-server not found; install the Debian package redis-server (tools/deps.sh)" >&2
	exit 1
fi
TLB_RATELIMIT_BIN="$(./tools/ratelimit/build.sh)"
export TLB_RATELIMIT_BIN

go vet -tags ratelimit ./l7/ratelimit/...
go vet -tags ratelimit ./l7/ratelimitconfig/
go vet -tags ratelimit ./integration/l7envoy/authz/
go test -tags ratelimit -count=1 -timeout 5m "$@" ./l7/ratelimit/... ./l7/ratelimitconfig/...
# Only the tests that need the service: the package's others run in
# make unit-test.
exec go test -tags ratelimit -count=1 -timeout 10m -run 'RateLimitAcross' "$@" ./integration/l7envoy/authz/
