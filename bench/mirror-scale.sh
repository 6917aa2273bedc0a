#!/usr/bin/env bash
# Mirroring at scale (issue 39): a catalog naming SIZE small images (see
# bench/mirrorimages/scale.go: bundles of five images, shared base layers
# across repositories, a third of the operands manifest lists of two
# platforms) mirrored between two of Debian's docker-registry on loopback
# (source A, target B), by
#   opm        opm alpha mirror A/bench/catalog:1 --to B/opm --use-http
#   skopeo     skopeo sync --all of the same images, listed by digest in a
#              YAML source (SKOPEO_MODE=copy: skopeo copy --all one image
#              after the other instead)
#   oc-mirror  oc-mirror --v2 mirror to mirror of an ImageSetConfiguration
#              naming the catalog (full: true: every bundle), a new
#              workspace and cache each run (skipped when OC_MIRROR is not
#              an executable, with the reason)
# For each SIZE, A is filled once; then REPEAT times each tool runs into an
# emptied B (stopped, storage removed, started again), the order rotating
# between repeats. Each run is timed by /usr/bin/time (wall, CPU, peak RSS:
# for skopeo copy the largest single process); the requests A and B
# answered are counted from their access logs, and the CPU the two
# registries spent meanwhile read from /proc; afterwards every image is
# checked at B by digest. It prints the median (min-max) of each.
#
# Usage: bench/mirror-scale.sh          (builds bin/opm first)
#   SIZES="200 2000" REPEAT=3 TOOLS="opm skopeo oc-mirror"
#   OPM=BINARY SKOPEO=BINARY OC_MIRROR=BINARY (default /tmp/oc-mirror/bin/oc-mirror)
#   BASE_OPM=BINARY with TOOLS="opm opm-base": another opm (before a change) beside it
#   SKOPEO_MODE=sync|copy  MIRROR_FLAGS="--concurrency 8" (opm's flags; opm reads OPM_* variables as flags)  KEEP=DIR (keep logs and reports there)
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-200 2000}
REPEAT=${REPEAT:-3}
SKOPEO=${SKOPEO:-skopeo}
SKOPEO_MODE=${SKOPEO_MODE:-sync}
OC_MIRROR=${OC_MIRROR:-/tmp/oc-mirror/bin/oc-mirror}
read -r -a tools <<<"${TOOLS:-opm skopeo oc-mirror}"
read -r -a opm_flags <<<"${MIRROR_FLAGS:-}"
for t in docker-registry curl jq python3 go "$SKOPEO"; do
  command -v "$t" >/dev/null || { echo "bench: $t not found (Debian: apt-get install -y $t)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
if [ -z "${OPM:-}" ]; then
  make -s build >/dev/null
  OPM=$PWD/bin/opm
fi
tmp=$(mktemp -d)
MI=$tmp/mirrorimages
go build -o "$MI" ./bench/mirrorimages

declare -A pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp -r "$tmp"/res-* "$tmp"/*.log "$tmp"/*.err "$KEEP"/ 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

REGISTRY_ACCESS_LOG=true
# shellcheck source=bench/lib/registries.sh
source bench/lib/registries.sh
# requests NAME: how many requests the registry's access log lists so far.
requests() { grep -cE '"(GET|HEAD|PUT|POST|PATCH|DELETE) /v2' "$tmp/$1.log" || true; }

A=127.0.0.1:$(free_port)
B=127.0.0.1:$(free_port)
start_registry A "$A"
start_registry B "$B"

ocm_why=""
if [[ " ${tools[*]} " == *" oc-mirror "* ]]; then
  if [ ! -x "$OC_MIRROR" ]; then
    ocm_why="$OC_MIRROR is not an executable (build it as bench/README.md says, or set OC_MIRROR=)"
  elif ! "$OC_MIRROR" --v2 version >/dev/null 2>&1 && ! "$OC_MIRROR" version >/dev/null 2>&1; then
    ocm_why="$OC_MIRROR does not run: $("$OC_MIRROR" version 2>&1 | tail -1)"
  fi
  if [ -n "$ocm_why" ]; then
    echo "bench: oc-mirror skipped: $ocm_why" >&2
    read -r -a tools <<<"$(printf '%s ' "${tools[@]}" | sed 's/oc-mirror //')"
  fi
fi

echo "$("$OPM" version 2>&1 | head -1)"
echo "$("$SKOPEO" --version) ($SKOPEO_MODE)${ocm_why:+, no oc-mirror}$([ -z "$ocm_why" ] && [[ " ${tools[*]} " == *" oc-mirror "* ]] && echo ", oc-mirror $OC_MIRROR"), $(nproc) CPUs, source $A, target $B"

# timed OUT CMD...: run CMD under /usr/bin/time; append "wall maxrss_kb cpu" to OUT.
timed() {
  local out=$1
  shift
  local rc=0
  /usr/bin/time -f '%e %M %U %S' -o "$tmp/time" "$@" || rc=$?
  awk '!/exited/ {printf "%s %s %.2f\n", $1, $2, $3+$4}' "$tmp/time" >>"$out"
  return $rc
}

run_opm() { # run_opm BINARY
  timed "$tmp/one" "$1" alpha mirror "$A/bench/catalog:1" --to "$B/opm" --use-http "${opm_flags[@]}" \
    --manifests-dir "$tmp/manifests-opm" -o json >"$tmp/opm.json" 2>"$tmp/opm.err" ||
    { echo "bench: opm alpha mirror failed:" >&2; tail -5 "$tmp/opm.err" >&2; exit 1; }
  [ "$(jq '.failed' "$tmp/opm.json")" = 0 ] && [ "$(jq '.images | length' "$tmp/opm.json")" = "$n" ] ||
    { echo "bench: opm mirrored $(jq '.images | length' "$tmp/opm.json") images, $(jq .failed "$tmp/opm.json") failed" >&2; exit 1; }
}

run_skopeo() {
  if [ "$SKOPEO_MODE" = sync ]; then
    timed "$tmp/one" "$SKOPEO" sync --all --insecure-policy --src yaml --dest docker --dest-tls-verify=false \
      "$tmp/sync.yaml" "$B/skopeo" >"$tmp/skopeo.err" 2>&1 ||
      { echo "bench: skopeo sync failed:" >&2; tail -5 "$tmp/skopeo.err" >&2; exit 1; }
    return
  fi
  local ref p
  : >"$tmp/each"
  local start end
  start=$(date +%s.%N)
  while IFS=$'\t' read -r _ ref _; do
    p=${ref#"$A"/}
    timed "$tmp/each" "$SKOPEO" copy -q --all --insecure-policy --src-tls-verify=false --dest-tls-verify=false \
      "docker://$ref" "docker://$B/skopeo/${p%@*}:bench" ||
      { echo "bench: skopeo copy $ref failed" >&2; exit 1; }
  done <"$tmp/images.tsv"
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" '{ if ($2 > r) r = $2; c += $3 } END {printf "%.2f %d %.2f\n", e-s, r, c}' "$tmp/each" >>"$tmp/one"
}

run_ocm() {
  rm -rf "$tmp/ocm-ws" "$tmp/ocm-cache"
  mkdir -p "$tmp/ocm-ws" "$tmp/ocm-cache"
  # Its own registry (the local cache) on a free port; auth from an empty
  # file (not REGISTRY_AUTH_FILE, which its embedded registry reads as
  # configuration).
  timed "$tmp/one" env HOME="$tmp/ocm-home" "$OC_MIRROR" --v2 -c "$tmp/isc.yaml" --authfile "$tmp/auth.json" \
    --workspace "file://$tmp/ocm-ws" --cache-dir "$tmp/ocm-cache" --port "$(free_port)" \
    --src-tls-verify=false --dest-tls-verify=false "docker://$B/ocm" >"$tmp/oc-mirror.err" 2>&1 ||
    { echo "bench: oc-mirror failed:" >&2; tail -5 "$tmp/oc-mirror.err" >&2; exit 1; }
}

# cpu_ticks NAME: user+system CPU of a registry so far, in clock ticks.
cpu_ticks() { awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/${pids[$1]}/stat"; }
hz=$(getconf CLK_TCK)

stats() { awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{a[NR]=$1} END {printf "%s %s %s\n", a[int((NR+1)/2)], a[1], a[NR]}'; }

table=""
for size in $SIZES; do
  restart_registry A "$A"
  t0=$(date +%s.%N)
  "$MI" -registry "$A" -images "$size" >"$tmp/images.tsv"
  n=$(wc -l <"$tmp/images.tsv")
  echo "size $size: pushed $n images (the catalog and $((n - 1)) it names) to A in $(awk -v t="$t0" -v n="$(date +%s.%N)" 'BEGIN {printf "%.0f", n-t}') s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  # skopeo sync's YAML source: each repository with its digests.
  awk -F'\t' -v a="$A" 'BEGIN {print a ":"; print "  tls-verify: false"; print "  images:"}
    { r = $2; sub("^" a "/", "", r); split(r, p, "@"); if (!(p[1] in seen)) { seen[p[1]] = 1; order[++k] = p[1] } d[p[1]] = d[p[1]] "      - \"" p[2] "\"\n" }
    END { for (i = 1; i <= k; i++) printf "    %s:\n%s", order[i], d[order[i]] }' "$tmp/images.tsv" >"$tmp/sync.yaml"
  cat >"$tmp/isc.yaml" <<EOF
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  operators:
  - catalog: $A/bench/catalog:1
    full: true
EOF
  echo '{"auths":{}}' >"$tmp/auth.json"
  for t in "${tools[@]}"; do : >"$tmp/res-$size-$t"; done
  for r in $(seq "$REPEAT"); do
    for k in "${!tools[@]}"; do
      t=${tools[$(((k + r - 1) % ${#tools[@]}))]}
      restart_registry B "$B"
      a0=$(requests A) b0=$(requests B) c0=$(($(cpu_ticks A) + $(cpu_ticks B)))
      : >"$tmp/one"
      case $t in
      opm) run_opm "$OPM"; prefix=opm last="" ;;
      opm-base) run_opm "$BASE_OPM"; prefix=opm last="" ;;
      skopeo) run_skopeo; prefix=skopeo last=$([ "$SKOPEO_MODE" != sync ] || echo -last) ;;
      oc-mirror) run_ocm; prefix=ocm last="" ;;
      *) echo "bench: unknown tool $t in TOOLS" >&2; exit 2 ;;
      esac
      reg=$(awk -v t="$(($(cpu_ticks A) + $(cpu_ticks B) - c0))" -v hz="$hz" 'BEGIN {printf "%.2f", t/hz}')
      echo "$(cat "$tmp/one") $(($(requests A) - a0)) $(($(requests B) - b0)) $reg" >>"$tmp/res-$size-$t"
      # shellcheck disable=SC2086
      "$MI" -check "$B/$prefix" $last <"$tmp/images.tsv" 2>/dev/null ||
        { "$MI" -check "$B/$prefix" $last <"$tmp/images.tsv"; exit 1; }
      echo "  size $size run $r $t: $(tail -1 "$tmp/res-$size-$t" | awk '{printf "%s s, peak RSS %.0f MB, CPU %s s, requests A %s B %s, registries CPU %s s", $1, $2/1024, $3, $4, $5, $6}') (load $(cut -d' ' -f1 /proc/loadavg))"
    done
  done
  for t in "${tools[@]}"; do
    read -r wm wlo whi < <(stats "$tmp/res-$size-$t" 1)
    read -r rm rlo rhi < <(stats "$tmp/res-$size-$t" 2)
    read -r cm _ _ < <(stats "$tmp/res-$size-$t" 3)
    read -r am _ _ < <(stats "$tmp/res-$size-$t" 4)
    read -r bm _ _ < <(stats "$tmp/res-$size-$t" 5)
    read -r gm _ _ < <(stats "$tmp/res-$size-$t" 6)
    table+=$(printf '%-6s %-10s %-22s %-16s %-7s %-7s %-7s %s' "$size" "$t" "$wm ($wlo-$whi)" \
      "$(awk -v m="$rm" -v lo="$rlo" -v hi="$rhi" 'BEGIN {printf "%.0f (%.0f-%.0f)", m/1024, lo/1024, hi/1024}')" "$cm" "$am" "$bm" "$gm")$'\n'
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "median (min-max) of $REPEAT runs into an empty target; requests answered by the source (A) and the target (B):"
printf '%-6s %-10s %-22s %-16s %-7s %-7s %-7s %s\n' images tool seconds "peak RSS MB" "CPU s" "req A" "req B" "registries CPU s"
printf '%s' "$table"
