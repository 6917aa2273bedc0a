# Sourced by bench scripts: refcatalog DIR REF MIN writes into DIR a
# file-based catalog of the reference renders in REF (one per package, the
# replaces render first), copied under renamed packages until it holds at
# least MIN bundles; sets `bundles` to the count.
refcatalog() {
  local dir=$1 ref=$2 min=$3 f pkg c=1
  local -A seen=()
  local renders=()
  mkdir -p "$dir"
  for f in "$ref"/*.replaces.fbc.json "$ref"/*.fbc.json; do
    pkg=$(basename "$f"); pkg=${pkg%%.*}
    [ -n "${seen[$pkg]:-}" ] && continue
    seen[$pkg]=1; renders+=("$f")
  done
  bundles=0
  while [ "$bundles" -lt "$min" ]; do
    for f in "${renders[@]}"; do
      pkg=$(basename "$f"); pkg=${pkg%%.*}
      mkdir -p "$dir/$pkg-c$c"
      sed "s/$pkg/$pkg-c$c/g" "$f" > "$dir/$pkg-c$c/catalog.json"
      bundles=$((bundles + $(grep -c '"schema": "olm.bundle"' "$f")))
    done
    c=$((c + 1))
  done
}
