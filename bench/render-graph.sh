#!/usr/bin/env bash
# opm alpha render-graph -o svg|html as whole processes: over the >=5,000-
# bundle catalog of bench/refcatalog.sh (the whole catalog is read; the
# largest package, by bundle count, is drawn), then over synthetic one-
# channel packages of 300 and 1,000 bundles (a replaces chain, every fifth
# bundle skipping one, every tenth with a skipRange over the ten below it),
# and over issue 40's hostile channel at each size of HOSTILE (entry i
# replaces i-1 with skipRange "<i.0.0": every range covers all before it).
# Prints, per run, wall and CPU time (/usr/bin/time), peak RSS and output size.
# Usage: bench/render-graph.sh   (RUNS=N, default 3; OPM=path to skip the build;
#        HOSTILE="500 2000" sizes of the hostile channel; ONLY=hostile skips the rest)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
HOSTILE=${HOSTILE:-500 2000}
ONLY=${ONLY:-}
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
REF=../shared/reference/index
[ -d "$REF" ] || { echo "bench: no reference renders at $REF" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OPM=${OPM:-}
if [ -z "$OPM" ]; then
  go build -tags "$TAGS" -o "$work/opm" ./cmd/opm
  OPM=$work/opm
fi

if [ "$ONLY" != hostile ]; then
  . bench/refcatalog.sh
  refcatalog "$work/catalog" "$REF" 5000
  largest=$(for d in "$work"/catalog/*/; do echo "$(grep -c '"schema": "olm.bundle"' "$d/catalog.json") $(basename "$d")"; done | sort -k1,1nr -k2 | awk "NR==1")
  pkg=${largest#* }
  echo "catalog: $bundles bundles, $(ls "$work/catalog" | wc -l) packages; largest package $pkg (${largest%% *} bundles)"
fi

# synthetic N: one package, one channel of N bundles.
synthetic() {
  python3 - "$1" "$work/syn$1" <<'PY'
import json, os, sys
n, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(out, exist_ok=True)
name = lambda i: "syn.v%d.%d.0" % (i // 10 + 1, i % 10)
entries, blobs = [], []
for i in range(n):
    e = {"name": name(i)}
    if i > 0: e["replaces"] = name(i - 1)
    if i % 5 == 0 and i > 1: e["replaces"], e["skips"] = name(i - 2), [name(i - 1)]
    if i % 10 == 9: e["skipRange"] = ">=%d.0.0 <%d.9.0" % (i // 10 + 1, i // 10 + 1)
    entries.append(e)
    blobs.append({"schema": "olm.bundle", "name": name(i), "package": "syn", "image": "example.com/syn:%d" % i,
                  "properties": [{"type": "olm.package", "value": {"packageName": "syn", "version": "%d.%d.0" % (i // 10 + 1, i % 10)}}]})
with open(os.path.join(out, "catalog.json"), "w") as f:
    for b in [{"schema": "olm.package", "name": "syn", "defaultChannel": "stable"},
              {"schema": "olm.channel", "package": "syn", "name": "stable", "entries": entries}] + blobs:
        f.write(json.dumps(b) + "\n")
PY
}
# hostile N: one channel of N bundles, each with a skipRange over all before it.
hostile() {
  python3 - "$1" "$work/hostile$1" <<'PY'
import json, os, sys
n, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(out, exist_ok=True)
name = lambda i: "h.v%d.0.0" % i
entries = [dict({"name": name(i), "skipRange": "<%d.0.0" % i}, **({"replaces": name(i - 1)} if i else {})) for i in range(n)]
with open(os.path.join(out, "catalog.json"), "w") as f:
    for b in [{"schema": "olm.package", "name": "h", "defaultChannel": "stable"},
              {"schema": "olm.channel", "package": "h", "name": "stable", "entries": entries}]:
        f.write(json.dumps(b) + "\n")
    for i in range(n):
        f.write(json.dumps({"schema": "olm.bundle", "name": name(i), "package": "h", "image": "example.com/h:%d" % i,
                            "properties": [{"type": "olm.package", "value": {"packageName": "h", "version": "%d.0.0" % i}}]}) + "\n")
PY
}
if [ "$ONLY" != hostile ]; then
  synthetic 300
  synthetic 1000
fi
for n in $HOSTILE; do hostile "$n"; done

# run LABEL ARGS...: RUNS timed render-graph processes.
run() {
  local label=$1; shift
  for i in $(seq "$RUNS"); do
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$OPM" alpha render-graph "$@" > "$work/out" 2>/dev/null
    read -r wall user sys rss < "$work/time"
    printf '%-34s run %d: %5.2f s wall, %5.2f s cpu, %4d MB RSS, %6d KB out\n' "$label" "$i" "$wall" "$(echo "$user + $sys" | bc)" $((rss / 1024)) $(($(stat -c %s "$work/out") / 1024))
  done
}
if [ "$ONLY" != hostile ]; then
  run "5k catalog, -p $pkg -o svg" "$work/catalog" -p "$pkg" -o svg
  run "5k catalog, -p $pkg -o html" "$work/catalog" -p "$pkg" -o html
  run "5k catalog, every package -o svg" "$work/catalog" -o svg
  run "300-bundle channel -o svg" "$work/syn300" -o svg
  run "1000-bundle channel -o svg" "$work/syn1000" -o svg
  run "1000-bundle channel -o html" "$work/syn1000" -o html
fi
for n in $HOSTILE; do
  run "hostile $n -o svg" "$work/hostile$n" -o svg
  run "hostile $n -o html" "$work/hostile$n" -o html
done
