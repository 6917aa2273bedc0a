#!/bin/sh
# Re-records upstream's opm serve answers over the fixture catalogs of
# testdata/serve-fbc (TestServeAnswersAsUpstreamServe compares opm serve
# with them). Needs an upstream opm build (operator-registry's cmd/opm):
#
#   UPSTREAM_OPM=/path/to/upstream/opm UPSTREAM_REV=4f9d6f22 hack/record-serve.sh
#
# (UPSTREAM_REV names the operator-registry commit in the recordings, for a
# build that does not say its own.)
# Each catalog directory DIR gets DIR.grpc.json. Review the diff: a
# changed answer is a change of upstream's behaviour (or of the fixture).
set -eu
cd "$(dirname "$0")/.."
: "${UPSTREAM_OPM:?set UPSTREAM_OPM to an upstream opm binary}"
version=${UPSTREAM_REV:-$("$UPSTREAM_OPM" version 2>/dev/null | tr -d '\n' | sed 's/.*GitCommit:"\([0-9a-f]*\)".*/\1/' | cut -c1-8)}
tags="containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub"
for dir in testdata/serve-fbc/*/; do
  dir=${dir%/}
  go run -tags "$tags" ./hack/record-serve -opm "$UPSTREAM_OPM" -server "upstream opm serve ${version:-unknown}" "$dir" > "$dir.grpc.json.tmp"
  mv "$dir.grpc.json.tmp" "$dir.grpc.json"
  echo "recorded $dir.grpc.json"
done
