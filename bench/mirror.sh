#!/usr/bin/env bash
# Mirror throughput (issue 29): `opm alpha mirror` of a catalog image and the
# 52 images it names, against copying the same 53 images one after the
# other with `skopeo copy --all` and with `crane copy`, between two of
# Debian's docker-registry on loopback (source A, target B).
#
# bench/mirrorimages pushes the images to A once (about 600 MB: manifest
# lists of two and three platforms, single images, 20-50 MB incompressible
# layers and many small ones; see its doc comment). Then, REPEAT times, each
# of these runs into an emptied B (B is stopped, its storage removed and it
# is started again before every run), in an order that rotates between
# repeats:
#   opm      opm alpha mirror A/bench/catalog:1 --to B/opm --use-http (--concurrency 4)
#   opm-c1   the same with --concurrency 1 (one image at a time, as the others)
#   skopeo   skopeo copy --all ... docker://A/x@sha256:... docker://B/skopeo/x:bench, per image
#   crane    crane copy --insecure A/x@sha256:... B/crane/x:bench, per image
#   crane-j1 crane copy --jobs 1 (one blob at a time, as opm copies the
#            blobs of one image; crane's default is GOMAXPROCS)
#   opm-nosig  (only with TOOLS=) opm with --signatures=false: no lookups of
#            cosign tags and referrers
# Every process runs under /usr/bin/time: wall seconds (for skopeo and crane
# the whole sequence), CPU seconds (summed over the processes), peak RSS (for
# skopeo and crane the largest single process); and the CPU seconds the two
# registries spent meanwhile (from /proc). After each run every image is
# checked at B by digest. It prints the median, minimum and maximum of each.
#
# Usage: bench/mirror.sh   (REPEAT=N, SCALE=F to multiply layer sizes,
#                           TOOLS="opm crane" for some of the rows,
#                           OPM=BINARY, CRANE=BINARY, SKOPEO=BINARY)
set -euo pipefail
cd "$(dirname "$0")/.."

REPEAT=${REPEAT:-3}
SCALE=${SCALE:-1}
SKOPEO=${SKOPEO:-skopeo}
CRANE=${CRANE:-$(command -v crane || echo "$(go env GOPATH)/bin/crane")}
for t in docker-registry curl jq python3 "$SKOPEO"; do
  command -v "$t" >/dev/null || { echo "bench: $t not found (Debian: apt-get install -y $t)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
[ -x "$CRANE" ] || { echo "bench: crane not found (go install github.com/google/go-containerregistry/cmd/crane@v0.22.1, or set CRANE=)" >&2; exit 2; }
if [ -z "${OPM:-}" ]; then
  make -s build >/dev/null
  OPM=$PWD/bin/opm
fi

tmp=$(mktemp -d)
declare -A pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# shellcheck source=bench/lib/registries.sh
source bench/lib/registries.sh

A=127.0.0.1:$(free_port)
B=127.0.0.1:$(free_port)
start_registry A "$A"
start_registry B "$B"

echo "$("$OPM" version 2>&1 | head -1)"
echo "$("$SKOPEO" --version), crane $("$CRANE" version), $(nproc) CPUs, source $A, target $B"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# The images, pushed once. images.tsv: role, reference by digest, bytes.
t0=$(date +%s.%N)
go run ./bench/mirrorimages -registry "$A" -scale "$SCALE" >"$tmp/images.tsv"
refs=() paths=() digests=()
total=0
while IFS=$'\t' read -r _ ref bytes; do
  refs+=("$ref")
  p=${ref#"$A"/}
  paths+=("${p%@*}") digests+=("${ref#*@}")
  total=$((total + bytes))
done <"$tmp/images.tsv"
n=${#refs[@]}
mb=$(awk -v b="$total" 'BEGIN {printf "%.1f", b/1e6}')
echo "pushed $n images ($mb MB) to the source in $(awk -v t="$t0" -v n="$(date +%s.%N)" 'BEGIN {printf "%.0f", n-t}') s; disk free: $(df -h --output=avail "$tmp" | tail -1 | tr -d ' ')"

# check_target PREFIX: every image is at B/PREFIX/<path> with its digest
# (opm keeps the repository path and pushes by digest; the others get a tag).
check_target() {
  local i got ref
  for i in "${!refs[@]}"; do
    ref=$B/$1/${paths[$i]}@${digests[$i]}
    got=$("$CRANE" digest --insecure "$ref" 2>/dev/null) || { echo "bench: $ref missing at the target" >&2; exit 1; }
    [ "$got" = "${digests[$i]}" ] || { echo "bench: $ref has digest $got" >&2; exit 1; }
  done
}

# timed OUT CMD...: run CMD under /usr/bin/time; append "wall maxrss_kb cpu" to OUT.
timed() {
  local out=$1
  shift
  /usr/bin/time -f '%e %M %U %S' -o "$tmp/time" "$@"
  awk '{printf "%s %s %.2f\n", $1, $2, $3+$4}' "$tmp/time" >>"$out"
}

run_opm() { # run_opm NAME CONCURRENCY [FLAG...]
  local rep=$tmp/$1.json name=$1 conc=$2
  shift 2
  : >"$tmp/one"
  timed "$tmp/one" "$OPM" alpha mirror "$A/bench/catalog:1" --to "$B/$name" --use-http \
    --concurrency "$conc" "$@" --manifests-dir "$tmp/manifests-$name" -o json >"$rep" 2>"$tmp/$name.err" ||
    { echo "bench: opm alpha mirror failed:" >&2; tail -5 "$tmp/$name.err" >&2; exit 1; }
  [ "$(jq '.failed' "$rep")" = 0 ] && [ "$(jq '.images | length' "$rep")" = "$n" ] ||
    { echo "bench: opm mirrored $(jq '.images | length' "$rep") images, $(jq .failed "$rep") failed" >&2; exit 1; }
  [ "$(wc -l <"$tmp/manifests-$name/mapping.txt")" = "$n" ] || { echo "bench: mapping.txt does not list $n images" >&2; exit 1; }
  cat "$tmp/one" >>"$tmp/res-$name"
}

run_each() { # run_each NAME: every image, one process after the other
  local i start end cpu=0 rss=0 w r c
  : >"$tmp/one"
  start=$(date +%s.%N)
  for i in "${!refs[@]}"; do
    case $1 in
    skopeo) timed "$tmp/one" "$SKOPEO" copy -q --all --insecure-policy --src-tls-verify=false --dest-tls-verify=false \
      "docker://${refs[$i]}" "docker://$B/skopeo/${paths[$i]}:bench" ;;
    crane) timed "$tmp/one" "$CRANE" copy --insecure "${refs[$i]}" "$B/crane/${paths[$i]}:bench" 2>/dev/null ;;
    crane-j1) timed "$tmp/one" "$CRANE" copy --insecure --jobs 1 "${refs[$i]}" "$B/crane-j1/${paths[$i]}:bench" 2>/dev/null ;;
    esac
  done
  end=$(date +%s.%N)
  while read -r w r c; do
    cpu=$(awk -v a="$cpu" -v b="$c" 'BEGIN {print a+b}')
    [ "$r" -gt "$rss" ] && rss=$r
  done <"$tmp/one"
  echo "$(awk -v s="$start" -v e="$end" 'BEGIN {printf "%.2f", e-s}') $rss $cpu" >>"$tmp/res-$1"
}

# cpu_ticks PID: user+system CPU of a process so far, in clock ticks.
cpu_ticks() { awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

read -r -a tools <<<"${TOOLS:-opm opm-c1 skopeo crane crane-j1}"
for r in $(seq "$REPEAT"); do
  for k in "${!tools[@]}"; do
    t=${tools[$(((k + r - 1) % ${#tools[@]}))]}
    restart_registry B "$B"
    a0=$(cpu_ticks "${pids[A]}") b0=$(cpu_ticks "${pids[B]}")
    case $t in
    opm) run_opm opm 4 ;;
    opm-c1) run_opm opm-c1 1 ;;
    opm-nosig) run_opm opm-nosig 4 --signatures=false ;;
    skopeo | crane | crane-j1) run_each "$t" ;;
    *) echo "bench: unknown tool $t in TOOLS" >&2; exit 2 ;;
    esac
    reg=$(awk -v a0="$a0" -v a1="$(cpu_ticks "${pids[A]}")" -v b0="$b0" -v b1="$(cpu_ticks "${pids[B]}")" -v hz="$hz" \
      'BEGIN {printf "%.2f", (a1-a0+b1-b0)/hz}')
    sed -i '$s/$/ '"$reg"'/' "$tmp/res-$t"
    check_target "$t"
    echo "  run $r $t: $(tail -1 "$tmp/res-$t" | awk '{printf "%s s, peak RSS %.0f MB, CPU %s s, registries CPU %s s", $1, $2/1024, $3, $4}') (load $(cut -d' ' -f1 /proc/loadavg))"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# stats FILE COLUMN: median min max
stats() { awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{a[NR]=$1} END {printf "%s %s %s\n", a[int((NR+1)/2)], a[1], a[NR]}'; }
echo
echo "$n images, $mb MB, median (min-max) of $REPEAT runs into an empty target:"
printf '%-9s %-22s  %-16s  %-14s  %-6s  %s\n' tool seconds MB/s "peak RSS MB" "CPU s" "registries CPU s"
for t in "${tools[@]}"; do
  read -r wm wlo whi < <(stats "$tmp/res-$t" 1)
  read -r rm rlo rhi < <(stats "$tmp/res-$t" 2)
  read -r cm _ _ < <(stats "$tmp/res-$t" 3)
  read -r gm _ _ < <(stats "$tmp/res-$t" 4)
  printf '%-9s %-22s  %-16s  %-14s  %-6s  %s\n' "$t" "$wm ($wlo-$whi)" \
    "$(awk -v b="$total" -v m="$wm" -v lo="$wlo" -v hi="$whi" 'BEGIN {printf "%.0f (%.0f-%.0f)", b/1e6/m, b/1e6/hi, b/1e6/lo}')" \
    "$(awk -v m="$rm" -v lo="$rlo" -v hi="$rhi" 'BEGIN {printf "%.0f (%.0f-%.0f)", m/1024, lo/1024, hi/1024}')" "$cm" "$gm"
done
