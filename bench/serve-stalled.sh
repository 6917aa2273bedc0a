#!/usr/bin/env bash
# The stalled-streams probe of issue 20: a server process (the registry test
# binary serving the 5,000-bundle benchmark database built from
# ../shared/reference) receives STALL_STREAMS ListBundles streams (default
# 5,000) on STALL_CONNS connections that are never read; then
# STALL_READERS clients (default 20) list every bundle. Prints the server's
# RSS before, with the streams stalled, and at its peak, the streams the
# server admitted (the rest wait in the client, --max-concurrent-streams),
# and the readers' time with and without the stall.
# Runs the probe once per STALL_CONNS value (default "50 625": issue 20's
# 5,000 streams on 50 connections, and issue 27's on 625, 8 a connection,
# where each connection's own buffers count too).
# Issue 40's probe is STALL_STREAMS=2000 STALL_CONNS=20 (100 a connection).
# Usage: bench/serve-stalled.sh   (RUNS=N, default 1; STALL_CONNS="50 625"; STALL_STREAMS=N)
set -euo pipefail
cd "$(dirname "$0")/.."
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
[ -d ../shared/reference/index ] || { echo "bench: no reference databases at ../shared/reference/index" >&2; exit 2; }
for conns in ${STALL_CONNS:-50 625}; do
  echo "STALL_CONNS=$conns"
  STALL_CONNS=$conns go test -tags "$TAGS" -count=1 -run '^$' -bench '^BenchmarkStalledStreamsRSS$' -benchtime "${RUNS:-1}x" ./internal/registry/
done
