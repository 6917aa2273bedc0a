#!/usr/bin/env bash
# Wall time of the command-layer tests (cmd/opm and internal/cmd), split in
# two: `go test` as a whole (compiling and linking one test binary per
# package, then running them), and the run phase alone (the prebuilt test
# binaries, two packages at a time as `go test -p 2` runs them, each in its
# package directory). Linking is CPU-bound and grows with the number of
# command packages; the run phase is what t.Parallel and child-process runs
# shorten.
# Usage: bench/cmd-tests.sh   (RUNS=N to change; TAGS as in the Makefile)
set -euo pipefail
cd "$(dirname "$0")/.."
TAGS=${TAGS:-containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub}
RUNS=${RUNS:-3}
P=${P:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

mapfile -t pkgs < <(go list -tags "$TAGS" -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' ./cmd/... ./internal/cmd/... ./internal/iostreams/...)
echo "packages with tests: ${#pkgs[@]}; load: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"

for i in $(seq "$RUNS"); do
  t0=$(now)
  go test -tags "$TAGS" -count=1 ./cmd/... ./internal/cmd/... ./internal/iostreams/... > "$work/gotest.out" 2>&1 || { cat "$work/gotest.out"; exit 1; }
  t1=$(now)
  n=0
  for d in "${pkgs[@]}"; do
    n=$((n + 1))
    go test -tags "$TAGS" -c -o "$work/$n.test" "$d"
    echo "$d $work/$n.test"
  done > "$work/bins"
  t2=$(now)
  # shellcheck disable=SC2016
  xargs -P "$P" -L 1 sh -c 'cd "$0" && "$1" -test.count=1 > /dev/null 2>&1 || { echo "FAIL $0" >&2; exit 255; }' < "$work/bins"
  t3=$(now)
  echo "run $i: go test $(secs "$t0" "$t1") s (build+link+run); run phase alone $(secs "$t2" "$t3") s (-p $P); load now $(cut -d' ' -f1 /proc/loadavg)"
done
