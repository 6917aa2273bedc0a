#!/usr/bin/env bash
# FBC input limits (issue 20, item 5): opm validate on generated hostile
# catalogs, each a whole process; prints exit status, wall time and peak RSS
# (/usr/bin/time's maximum resident set) and the finding:
#   1. one 512 MiB blob (under the default 1 GiB --max-file-size, over the
#      default 128 MiB --max-blob-size);
#   2. one 2 GiB blob (over --max-file-size: refused by its size, unread);
#   3. 10,000,000 tiny blobs in one file (≈ 150 MB; each blob counts 1 KiB);
#   4. the 512 MiB blob again with the limits off (0), for comparison
#      (skipped unless NOLIMIT=1: it needs several GiB of memory).
# Usage: bench/fbc-limits.sh   (OPM=path to skip the build)
set -euo pipefail
cd "$(dirname "$0")/.."
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OPM=${OPM:-}
if [ -z "$OPM" ]; then
  go build -tags "$TAGS" -o "$work/opm" ./cmd/opm
  OPM=$work/opm
fi

blob() { # DIR MiB: a catalog whose line-3 bundle carries a MiB-sized property
  mkdir -p "$1/p"
  {
    echo '{"schema":"olm.package","name":"p","defaultChannel":"stable"}'
    echo '{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1"}]}'
    printf '{"schema":"olm.bundle","name":"p.v1","package":"p","image":"example.com/p:1","properties":[{"type":"example.com/big","value":"'
    head -c "$(( $2 * 1024 * 1024 ))" /dev/zero | tr '\0' a
    echo '"}]}'
  } > "$1/p/catalog.json"
}

run() { # NAME DIR ARGS...
  local name=$1 dir=$2; shift 2
  local start end rc
  start=$(date +%s.%N)
  set +e
  /usr/bin/time -f '%M' -o "$work/rss" "$OPM" validate "$dir" "$@" > /dev/null 2> "$work/err"
  rc=$?
  set -e
  end=$(date +%s.%N)
  printf '%-28s exit %d  %6.2f s  peak RSS %5d MiB  %s\n' "$name" "$rc" "$(echo "$end - $start" | bc)" "$(( $(tail -1 "$work/rss") / 1024 ))" \
    "$(grep -m1 -A1 'catalog.json' "$work/err" | tr -s ' \n' ' ' | cut -c1-150)"
}

blob "$work/b512" 512
run "512 MiB blob" "$work/b512"
rm -rf "$work/b512"
blob "$work/b2g" 2048
run "2 GiB blob" "$work/b2g"
rm -rf "$work/b2g"
mkdir -p "$work/tiny"
{ yes '{"schema":"x"}' || true; } | head -n 10000000 > "$work/tiny/catalog.json"
run "10M tiny blobs" "$work/tiny"
rm -rf "$work/tiny"
if [ "${NOLIMIT:-0}" = 1 ]; then
  blob "$work/b512" 512
  run "512 MiB blob, no limits" "$work/b512" --max-blob-size 0 --max-file-size 0
fi
