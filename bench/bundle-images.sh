#!/usr/bin/env bash
# Bundle image benchmarks against Debian's docker-registry on loopback:
#   1. build+push of one bundle (etcd 0.9.4): the first push to a new
#      repository, then rebuilds whose blobs the registry already has;
#   2. build+push of every bundle of the corpus (one opm process each);
#   3. pull+validate of all of them in one `opm bundle validate` run,
#      against validating the same bundles as directories, and a check that
#      both runs report the same findings.
# Usage: bench/bundle-images.sh   (CORPUS=DIR, OPM=BINARY, RUNS=N to change)
set -euo pipefail
cd "$(dirname "$0")/.."

CORPUS=${CORPUS:-../shared/corpus/real}
RUNS=${RUNS:-5}
for t in docker-registry curl jq; do
  command -v "$t" >/dev/null || { echo "bench: $t not found (Debian: apt-get install -y $t)" >&2; exit 2; }
done
[ -d "$CORPUS" ] || { echo "bench: no corpus at $CORPUS (set CORPUS=...)" >&2; exit 2; }
if [ -z "${OPM:-}" ]; then
  make -s build >/dev/null
  OPM=$PWD/bin/opm
fi

tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

# A registry on a free loopback port, with its storage in the temp dir.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
reg=127.0.0.1:$port
cat >"$tmp/config.yml" <<EOF
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: $tmp/storage}
  delete: {enabled: true}
http:
  addr: $reg
EOF
docker-registry serve "$tmp/config.yml" >"$tmp/registry.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -fs "http://$reg/v2/" >/dev/null && break; sleep 0.05; done
curl -fs "http://$reg/v2/" >/dev/null || { cat "$tmp/registry.log"; exit 2; }

now() { date +%s.%N; }
ms() { echo "$1 $2" | awk '{printf "%.0f", ($2-$1)*1000}'; }

echo "$("$OPM" version 2>&1 | head -1), $(nproc) CPUs, registry $reg"

# 1. One bundle.
etcd=$CORPUS/etcd/0.9.4
times=()
for i in $(seq "$RUNS"); do
  t0=$(now)
  "$OPM" bundle build -d "$etcd" -t "$reg/bench/etcd:run$i" --use-http -o json >"$tmp/build.json"
  times+=("$(ms "$t0" "$(now)")")
done
sorted=$(printf '%s\n' "${times[@]:1}" | sort -n)
median=$(echo "$sorted" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "build+push etcd 0.9.4: first (blobs uploaded) ${times[0]} ms, rebuilds (blobs present) median ${median} ms over $((RUNS - 1)); digest $(jq -r .digest "$tmp/build.json")"

# 2. Every bundle of the corpus, each to its own repository.
dirs=() refs=()
for d in "$CORPUS"/*/*/; do
  d=${d%/}
  pkg=$(basename "$(dirname "$d")" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9._\n-' '-')
  ver=$(basename "$d" | tr -c 'A-Za-z0-9._\n-' '-')
  dirs+=("$d") refs+=("$reg/corpus/$pkg:$ver")
done
t0=$(now)
failed=0
for i in "${!dirs[@]}"; do
  if ! "$OPM" bundle build -d "${dirs[$i]}" -t "${refs[$i]}" --use-http --permissive -o json >/dev/null 2>"$tmp/err"; then
    failed=$((failed + 1))
    echo "  build failed: ${dirs[$i]}: $(tail -1 "$tmp/err")"
  fi
done
echo "build+push all ${#dirs[@]} bundles (one process each): $(ms "$t0" "$(now)") ms, $failed failed"

# 3. Pull+validate all of them in one run, against the directories.
t0=$(now)
"$OPM" bundle validate -o json "${dirs[@]}" >"$tmp/dirs.json" || [ $? -eq 1 ]
dir_ms=$(ms "$t0" "$(now)")
for i in 1 2 3; do
  t0=$(now)
  "$OPM" bundle validate --use-http -o json "${refs[@]}" >"$tmp/images.json" || [ $? -eq 1 ]
  img_ms[$i]=$(ms "$t0" "$(now)")
done
echo "pull+validate ${#refs[@]} bundle images in one run: ${img_ms[1]} / ${img_ms[2]} / ${img_ms[3]} ms (3 runs); the same as directories: $dir_ms ms"

# The same findings either way (paths aside: messages of package rules name
# the other bundle's path).
norm='[.bundles[] | {name, findings: [.findings[] | del(.message)]}]'
if diff <(jq -S "$norm" "$tmp/dirs.json") <(jq -S "$norm" "$tmp/images.json") >/dev/null; then
  echo "findings: identical for images and directories ($(jq '[.bundles[].findings[]] | length' "$tmp/images.json") findings)"
else
  echo "findings: DIFFER between images and directories"
  diff <(jq -S "$norm" "$tmp/dirs.json") <(jq -S "$norm" "$tmp/images.json") | head -20
  exit 1
fi
