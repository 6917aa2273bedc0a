#!/usr/bin/env bash
# `opm bundle validate` on real bundles: the shared corpus's
# (../shared/corpus/real) and, where given, any directories holding bundle
# directories (a catalog repository's operators/, an unpacked catalog).
# Prints, per set: bundles, manifest KB per bundle, CPU (user+system) per
# bundle and per MB of manifests, and peak RSS of one `opm bundle validate
# DIR... -o json` process, once with the default rules and once with every
# rule set selected (--select default,olmv1,supply-chain,operatorhub,
# openshift,preflight,community,conforma), each the least CPU of REPEAT runs (3), and the ratio of the
# two (issue 28 wants at most 1.5); then where the CPU goes: the top of a pprof CPU
# profile of BenchmarkValidateRealBundles (internal/validate), which runs
# the same validation in-process.
#
# Usage: bench/validate-real.sh [DIR...]        (builds bin/opm first)
#        OPM=/path/to/opm PROFILE=/tmp/validate.prof bench/validate-real.sh ~/community-operators/operators
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
sets=()
[ -d ../shared/corpus/real ] && sets+=("$(realpath ../shared/corpus/real)")
for d in "$@"; do sets+=("$(realpath "$d")"); done
[ ${#sets[@]} -gt 0 ] || { echo "bench: no corpus at ../shared/corpus/real and no directory given" >&2; exit 2; }
if [ -z "${OPM:-}" ]; then
  make -s build >/dev/null
  OPM=$repo/bin/opm
fi
PROFILE=${PROFILE:-$(mktemp "${TMPDIR:-/tmp}/opm-validate-real.XXXXXX.prof")}

all_sets=default,olmv1,supply-chain,operatorhub,openshift,preflight,community,conforma
printf '%-40s %-8s %8s %12s %14s %10s %9s\n' set rules bundles "KB/bundle" "CPU/bundle" "CPU/MB" "peak RSS"
for set in "${sets[@]}"; do
  mapfile -t dirs < <(find "$set" -type d -name manifests -printf '%h\n' | sort)
  [ ${#dirs[@]} -gt 0 ] || { echo "bench: no bundle directories under $set" >&2; continue; }
  kb=$(du -skL --apparent-size "${dirs[@]/%//manifests}" | awk '{s+=$1} END {print s}')
  # The two selections run in turn, REPEAT times each, so that a change of
  # load on a shared machine weighs on both alike; each keeps its least CPU.
  declare -A cpu_of=() rss_of=()
  for _ in $(seq "${REPEAT:-3}"); do
    for rules in default all; do
      sel=default
      [ "$rules" = all ] && sel=$all_sets
      # One process for the set; exit status 1 (failing findings) is expected.
      /usr/bin/time -f '%U %S %M' -o "$PROFILE.time" "$OPM" bundle validate --select "$sel" "${dirs[@]}" -o json >/dev/null 2>&1 || true
      read -r user sys rss < <(tail -n 1 "$PROFILE.time")
      cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {print (u + s) * 1000}')
      if [ -z "${cpu_of[$rules]:-}" ] || awk -v a="$cpu" -v b="${cpu_of[$rules]}" 'BEGIN {exit !(a < b)}'; then
        cpu_of[$rules]=$cpu rss_of[$rules]=$rss
      fi
    done
  done
  for rules in default all; do
    awk -v s="$set" -v r="$rules" -v n=${#dirs[@]} -v kb="$kb" -v cpu="${cpu_of[$rules]}" -v rss="${rss_of[$rules]}" 'BEGIN {
      printf "%-40s %-8s %8d %12.1f %11.2f ms %7.1f ms %6.0f MB\n", substr(s, length(s) - 39), r, n, kb / n, cpu / n, cpu / (kb / 1024), rss / 1024 }'
  done
  awk -v a="${cpu_of[all]}" -v d="${cpu_of[default]}" 'BEGIN { if (d > 0) printf "  every set / default set: %.2fx CPU\n", a / d }'
done
rm -f "$PROFILE.time"

# Where the CPU goes, on the same bundles, in-process.
bundles=$(IFS=:; echo "${sets[*]}")
OPM_BENCH_BUNDLES=$bundles go test -tags "$TAGS" -run '^$' -bench BenchmarkValidateRealBundles -benchtime "${RUNS:-5}x" \
  -cpuprofile "$PROFILE" -o "${PROFILE%.prof}.test" ./internal/validate | grep '^Benchmark' || true
echo "CPU profile: $PROFILE (go tool pprof -http : $PROFILE); top by cumulative time:"
go tool pprof -top -cum -nodecount 25 "${PROFILE%.prof}.test" "$PROFILE" 2>/dev/null |
  grep -E 'opmkit|yaml|json' | head -20
rm -f "${PROFILE%.prof}.test"
