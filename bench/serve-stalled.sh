#!/usr/bin/env bash
# The stalled-streams probe of issue 20: a server process (the registry test
# binary serving the 5,000-bundle benchmark database built from
# ../shared/reference) receives STALL_STREAMS ListBundles streams (default
# 5,000) on STALL_CONNS connections (default 50) that are never read; then
# STALL_READERS clients (default 20) list every bundle. Prints the server's
# RSS before, with the streams stalled, and at its peak, the streams the
# server admitted (the rest wait in the client, --max-concurrent-streams),
# and the readers' time with and without the stall.
# Usage: bench/serve-stalled.sh   (RUNS=N, default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
[ -d ../shared/reference/index ] || { echo "bench: no reference databases at ../shared/reference/index" >&2; exit 2; }
exec go test -tags "$TAGS" -count=1 -run '^$' -bench '^BenchmarkStalledStreamsRSS$' -benchtime "${RUNS:-1}x" ./internal/registry/
