#!/usr/bin/env bash
# opm alpha filter at catalog scale (issue 29): the synthetic catalog of
# bench/gencatalog (renamed copies of ../shared/corpus, N bundles; the real
# packages' channels, replaces, skips and skipRanges), added to a sqlite
# index in one `opm index add` call and migrated to a catalog directory.
# bench/filter-config.py then writes two configurations that keep every
# other package (about half) from the middle version of its default channel
# up: a FilterConfiguration (a versionRange on the default channel) and an
# ImageSetConfiguration (minVersion/maxVersion on the package: the range in
# every channel);
# and a FilterConfiguration of ten of those packages (few.yaml: a mirror's
# usual case).
#
# Each run is one whole opm process under /usr/bin/time; it prints the
# median of REPEAT runs of wall time, CPU (user + system) and peak RSS:
#   render DIR -o json                       the baseline, "render (streamed)":
#                                            the catalog read a package at a time
#                                            and printed whole
#   filter DIR --config filter.yaml -o json  (to /dev/null)
#   filter DIR --config filter.yaml --output-dir D
#   filter DIR --config imageset.yaml -o json
#   filter DIR --config few.yaml -o json
# and the filter's cost over the render baseline's, per bundle of the
# catalog, and what it kept.
#
# Usage: bench/filter-scale.sh     (SIZES="5000 22000" REPEAT=3; OPM=path, default: make build)
#   KEEP=DIR  keep the generated databases and catalog directories in DIR
#             and reuse them (22,000 bundles take several minutes to add)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
SIZES=${SIZES:-"5000 22000"}
REPEAT=${REPEAT:-3}
CORPUS=${CORPUS:-../shared/corpus}
[ -d "$CORPUS/real" ] || { echo "bench: no corpus at $CORPUS/real" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "bench: sqlite3 not found (Debian: apt-get install -y sqlite3)" >&2; exit 2; }
if [ -z "${OPM:-}" ]; then
  make -s build >/dev/null
  OPM=$repo/bin/opm
fi
OPM=$(realpath "$OPM")
work=$(mktemp -d "${TMPDIR:-/tmp}/opm-filter-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
KEEP=${KEEP:-$work/keep}
mkdir -p "$KEEP"
KEEP=$(realpath "$KEEP")
export XDG_CACHE_HOME=$work/xdg # the verified-database log of this run only

# prepare N: $KEEP/dbN.db and $KEEP/catN (a catalog directory), unless kept.
prepare() {
  local n=$1
  if [ ! -f "$KEEP/db$n.db" ]; then
    rm -rf "$work/bundles"
    go run ./bench/gencatalog -corpus "$CORPUS" -out "$work/bundles" -n "$n" >/dev/null
    # -b repeated: one comma-joined argument would exceed the kernel's 128 KiB limit.
    # shellcheck disable=SC2046
    (cd "$work/bundles" && "$OPM" index add --mode semver --permissive --database "$KEEP/db$n.db.tmp" $(sed 's/^/-b /' bundles.txt) >/dev/null 2>&1)
    mv "$KEEP/db$n.db.tmp" "$KEEP/db$n.db"
    rm -rf "$work/bundles"
  fi
  if [ ! -d "$KEEP/cat$n" ]; then
    rm -rf "$KEEP/cat$n.tmp"
    "$OPM" migrate --permissive "$KEEP/db$n.db" "$KEEP/cat$n.tmp" 2>/dev/null
    mv "$KEEP/cat$n.tmp" "$KEEP/cat$n"
  fi
}

# configs N: $work/cfgN/{filter,imageset}.yaml. A package the filter
# refuses (a default channel of the corpus's edge cases that the middle
# version cannot join to one head) is named in its error and left out.
configs() {
  local n=$1 skip=() d=$work/cfg$1
  mkdir -p "$d"
  for _ in $(seq 20); do
    python3 bench/filter-config.py "$KEEP/db$n.db" "$d" "${skip[@]}" >"$d/summary"
    if "$OPM" alpha filter "$KEEP/cat$n" --config "$d/filter.yaml" -o json >/dev/null 2>"$d/err" &&
      "$OPM" alpha filter "$KEEP/cat$n" --config "$d/imageset.yaml" -o json >/dev/null 2>>"$d/err"; then
      return
    fi
    local bad
    bad=$(sed -n 's/.*: package \([^ :]*\)[ :].*/\1/p' "$d/err" | head -1)
    [ -n "$bad" ] || { echo "bench: the filter failed:" >&2; cat "$d/err" >&2; exit 1; }
    skip+=("$bad")
  done
  echo "bench: the filter still fails after leaving out ${skip[*]}" >&2
  exit 1
}

# measure LABEL CMD...: REPEAT runs of CMD (stdout to /dev/null); sets
# med_wall, med_cpu, med_rss (MB) to the medians and prints a row.
measure() {
  local label=$1; shift
  local walls=() cpus=() rsss=()
  for _ in $(seq "$REPEAT"); do
    rm -rf "$work/outdir"
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || { echo "bench: $label failed:" >&2; cat "$work/err" >&2; exit 1; }
    read -r secs user sys kb < <(tail -1 "$work/time")
    walls+=("$secs"); cpus+=("$(echo "$user + $sys" | bc -l)"); rsss+=("$((kb / 1024))")
  done
  med_wall=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "$(((REPEAT + 1) / 2))p")
  med_cpu=$(printf '%s\n' "${cpus[@]}" | sort -g | sed -n "$(((REPEAT + 1) / 2))p")
  med_rss=$(printf '%s\n' "${rsss[@]}" | sort -g | sed -n "$(((REPEAT + 1) / 2))p")
  printf '  %-48s %7.2f s %7.2f s %6d MB' "$label" "$med_wall" "$med_cpu" "$med_rss"
}

echo "opm: $OPM; $(nproc) CPUs; REPEAT=$REPEAT"
for n in $SIZES; do
  prepare "$n"
  configs "$n"
  cat=$KEEP/cat$n
  echo
  echo "$n bundles: $(sqlite3 "$KEEP/db$n.db" 'select count(*) from operatorbundle') in the database, $(ls "$cat" | wc -l) packages, catalog directory $(du -sm "$cat" | cut -f1) MB; $(cat "$work/cfg$n/summary"); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '  %-48s %9s %9s %9s  %s\n' "" "wall" "CPU" "peak RSS" "over render (streamed): CPU a bundle, RSS"
  measure "baseline render (streamed) DIR -o json" "$OPM" render "$cat" -o json
  echo
  base_cpu=$med_cpu base_rss=$med_rss
  over() { printf '  %+7.0f µs %+6d MB (%.2fx CPU, %.2fx RSS)  kept %s\n' "$(echo "($med_cpu - $base_cpu) * 1000000 / $n" | bc -l)" "$((med_rss - base_rss))" \
    "$(echo "$med_cpu / $base_cpu" | bc -l)" "$(echo "$med_rss / $base_rss" | bc -l)" "$(sed -n 's/^kept \([0-9]*\) packages, [0-9]* channels, \([0-9]*\) bundles.*/\1 pkgs, \2 bundles/p' "$work/err")"; }
  measure "filter --config filter.yaml -o json" "$OPM" alpha filter "$cat" --config "$work/cfg$n/filter.yaml" -o json
  over
  measure "filter --config filter.yaml --output-dir" "$OPM" alpha filter "$cat" --config "$work/cfg$n/filter.yaml" --output-dir "$work/outdir"
  over
  measure "filter --config imageset.yaml -o json" "$OPM" alpha filter "$cat" --config "$work/cfg$n/imageset.yaml" -o json
  over
  measure "filter --config few.yaml -o json" "$OPM" alpha filter "$cat" --config "$work/cfg$n/few.yaml" -o json
  over
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
