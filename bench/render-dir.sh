#!/usr/bin/env bash
# opm render DIR's memory on a large catalog directory (issue 40, item 6):
# a generated catalog of PACKAGES packages (default 2,000) of BUNDLES
# bundles each (default 10), each bundle carrying PAD bytes (default 10,000)
# of olm.bundle.object data, so 2,000 x 10 x 10 KB is about 200 MB of JSON,
# in two layouts: one directory a package (as opm migrate writes it), and
# every package's blobs spread over 20 files at the root, each package in
# several of them. Each run is one whole opm process under /usr/bin/time:
# wall time, CPU (user + system), peak RSS; with OPM_BEFORE=path the same
# runs go first through that (older) binary, and both outputs are compared
# byte for byte.
# Usage: bench/render-dir.sh   (OPM=path to skip the build; PACKAGES, BUNDLES, PAD)
set -euo pipefail
cd "$(dirname "$0")/.."
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
PACKAGES=${PACKAGES:-2000}
BUNDLES=${BUNDLES:-10}
PAD=${PAD:-10000}
work=$(mktemp -d "${TMPDIR:-/tmp}/opm-render-dir.XXXXXX")
trap 'rm -rf "$work"' EXIT
OPM=${OPM:-}
OPM_BEFORE=${OPM_BEFORE:-}
# opm reads OPM_* variables as flags (OPM_BEFORE would be refused as one).
export -n OPM OPM_BEFORE
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
if [ -z "$OPM" ]; then
  go build -tags "$TAGS" -o "$work/opm" ./cmd/opm
  OPM=$work/opm
fi

python3 - "$work" "$PACKAGES" "$BUNDLES" "$PAD" <<'PY'
import base64, json, os, sys
work, npkg, nb, pad = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
os.makedirs(f"{work}/bydir")
os.makedirs(f"{work}/spread")
spread = [open(f"{work}/spread/part{i:02d}.json", "w") for i in range(20)]
for p in range(npkg):
    name = f"pkg-{p:05d}"
    blobs = [{"schema": "olm.package", "name": name, "defaultChannel": "stable"}]
    entries = []
    for b in range(nb):
        bn = f"{name}.v1.{b}.0"
        entries.append({"name": bn, **({"replaces": f"{name}.v1.{b-1}.0"} if b else {})})
        data = base64.b64encode((f"{name}-{b}-" * (pad // 8 + 1)).encode()[: pad * 3 // 4]).decode()
        blobs.append({"schema": "olm.bundle", "name": bn, "package": name, "image": f"example.com/{name}:v1.{b}.0",
                      "properties": [{"type": "olm.package", "value": {"packageName": name, "version": f"1.{b}.0"}},
                                     {"type": "olm.bundle.object", "value": {"data": data}}]})
    blobs.insert(1, {"schema": "olm.channel", "name": "stable", "package": name, "entries": entries})
    os.makedirs(f"{work}/bydir/{name}")
    with open(f"{work}/bydir/{name}/catalog.json", "w") as f:
        for b in blobs:
            f.write(json.dumps(b) + "\n")
    for i, b in enumerate(blobs):
        spread[(p + i * 7) % 20].write(json.dumps(b) + "\n")
for f in spread:
    f.close()
PY
echo "opm: $OPM; $(nproc) CPUs; $PACKAGES packages x $BUNDLES bundles, $(du -sm "$work/bydir" | cut -f1) MB of JSON; load average $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # LABEL BINARY DIR
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$2" render "$3" -o json >"$work/out.$1" 2>"$work/err" || { echo "bench: $1 failed:" >&2; cat "$work/err" >&2; exit 1; }
  read -r secs user sys kb < <(tail -1 "$work/time")
  printf '  %-36s %7.2f s %7.2f s %6d MiB\n' "$1" "$secs" "$(echo "$user + $sys" | bc -l)" "$((kb / 1024))"
}
printf '  %-36s %9s %9s %10s\n' "" "wall" "CPU" "peak RSS"
for layout in bydir spread; do
  if [ -n "$OPM_BEFORE" ]; then
    run "before: render $layout" "$OPM_BEFORE" "$work/$layout"
  fi
  run "render $layout" "$OPM" "$work/$layout"
  if [ -n "$OPM_BEFORE" ]; then
    cmp -s "$work/out.before: render $layout" "$work/out.render $layout" || { echo "bench: the outputs of $layout differ" >&2; exit 1; }
    rm -f "$work/out.before: render $layout"
  fi
  rm -f "$work/out.render $layout"
done
[ -z "$OPM_BEFORE" ] || echo "  (before and now print the same bytes)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
