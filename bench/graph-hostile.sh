#!/usr/bin/env bash
# Graph commands over the n² channel of issue 40: one package, one channel
# whose entry i replaces i-1 and has skipRange "<i.0.0" (every bundle
# before it). Runs, per size, render-graph (mermaid, dot, json, svg, html),
# diff (against the same channel one release shorter; -o json and -o html),
# upgrade-path from the oldest bundle and --from-range over all of them,
# alpha filter keeping the upper half (a versionRange), each a whole process
# timed with /usr/bin/time: wall and CPU (user+sys) seconds, peak RSS and
# output size; then one GET of the web UI's package page from
# `opm serve --http-ui` (wall and the server's CPU for the GET, its peak RSS
# before -> after the GET, page size). On a loaded machine read the CPU column.
# Usage: bench/graph-hostile.sh   (SIZES="500 1000 2000 4000 8000"; OPM=path
# to skip the build)
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"500 1000 2000 4000 8000"}
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OPM=${OPM:-}
if [ -z "$OPM" ]; then
  go build -tags "$TAGS" -o "$work/opm" ./cmd/opm
  OPM=$work/opm
fi

# catalog N DIR: the n² channel of N bundles, h.v1.0.0 … h.vN.0.0.
catalog() {
  python3 - "$1" "$2" <<'PY'
import json, os, sys
n, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(os.path.join(out, "h"), exist_ok=True)
entries = []
with open(os.path.join(out, "h", "catalog.json"), "w") as f:
    f.write(json.dumps({"schema": "olm.package", "name": "h", "defaultChannel": "stable"}) + "\n")
    for i in range(1, n + 1):
        e = {"name": "h.v%d.0.0" % i}
        if i > 1:
            e["replaces"] = "h.v%d.0.0" % (i - 1)
            e["skipRange"] = "<%d.0.0" % i
        entries.append(e)
        f.write(json.dumps({"schema": "olm.bundle", "package": "h", "name": "h.v%d.0.0" % i, "image": "example.com/h:%d" % i,
                            "properties": [{"type": "olm.package", "value": {"packageName": "h", "version": "%d.0.0" % i}}]}) + "\n")
    f.write(json.dumps({"schema": "olm.channel", "package": "h", "name": "stable", "entries": entries}) + "\n")
PY
}

# run LABEL ARGS...: one timed opm process; prints label, wall s, peak MB.
run() {
  local label=$1; shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$OPM" "$@" > "$work/out" 2>"$work/err" || true
  read -r wall user sys rss < <(tail -1 "$work/time")
  printf '%-28s %6d %8.2f s %8.2f s %8.1f MB %10d B\n' "$label" "$n" "$wall" "$(echo "$user+$sys" | bc -l)" "$(echo "$rss/1024" | bc -l)" "$(stat -c %s "$work/out")"
}

# ui LABEL: opm serve --http-ui of the catalog new$n, one GET of its
# package page; the server's peak RSS (VmHWM) before the GET, then after.
ui() {
  local label=$1 port=$((20000 + RANDOM % 20000)) pid hwm0 hwm1 cpu0 cpu1 t0 t1
  "$OPM" serve "$work/new$n" --http "127.0.0.1:$port" --grpc=false --http-ui >/dev/null 2>"$work/err" &
  pid=$!
  for _ in $(seq 300); do curl -sf -o /dev/null "127.0.0.1:$port/" && break; sleep 0.2; done
  hwm0=$(awk '/VmHWM/{print $2}' "/proc/$pid/status")
  cpu0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  t0=$(date +%s.%N)
  curl -sf -o "$work/out" "127.0.0.1:$port/ui/packages/h" || echo "bench: GET /ui/packages/h failed" >&2
  t1=$(date +%s.%N)
  cpu1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  hwm1=$(awk '/VmHWM/{print $2}' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  printf '%-28s %6d %8.2f s %8.2f s %5.1f→%5.1f MB %10d B\n' "$label" "$n" "$(echo "$t1-$t0" | bc -l)" "$(echo "($cpu1-$cpu0)/$(getconf CLK_TCK)" | bc -l)" \
    "$(echo "$hwm0/1024" | bc -l)" "$(echo "$hwm1/1024" | bc -l)" "$(stat -c %s "$work/out")"
}

printf '%-28s %6s %10s %10s %11s %12s\n' command bundles wall CPU "peak RSS" output
for n in $SIZES; do
  catalog "$n" "$work/new$n"
  catalog "$((n - 1))" "$work/old$n"
  run "render-graph (mermaid)" alpha render-graph "$work/new$n"
  run "render-graph -o dot" alpha render-graph "$work/new$n" -o dot
  run "render-graph -o json" alpha render-graph "$work/new$n" -o json
  run "render-graph -o svg" alpha render-graph "$work/new$n" -o svg
  run "render-graph -o html" alpha render-graph "$work/new$n" -o html
  run "diff (n-1 → n)" diff "$work/old$n" "$work/new$n" -o json
  run "diff -o html (n-1 → n)" diff "$work/old$n" "$work/new$n" -o html
  run "upgrade-path --from oldest" alpha upgrade-path "$work/new$n" --package h --from h.v1.0.0
  run "upgrade-path --from-range" alpha upgrade-path "$work/new$n" --package h --from-range ">=0.0.0"
  printf 'apiVersion: olm.operatorframework.io/v1alpha1\nkind: FilterConfiguration\npackages:\n- name: h\n  channels:\n  - name: stable\n    versionRange: ">=%d.0.0"\n' "$((n / 2))" > "$work/filter.yaml"
  run "alpha filter (upper half)" alpha filter "$work/new$n" --config "$work/filter.yaml" -o json
  ui "UI package page (GET)"
  rm -rf "$work/new$n" "$work/old$n"
done
