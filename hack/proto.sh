#!/usr/bin/env bash
# Generates the Go code of internal/registry/api from registry.proto with
# protoc and pinned plugins (installed into GOPATH/bin when missing or of
# another version). The plugin versions match google.golang.org/protobuf and
# google.golang.org/grpc in go.mod; change them together.
#
# Usage: hack/proto.sh [OUTDIR]   (default: internal/registry/api)
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2

command -v protoc >/dev/null || { echo "proto: protoc not found (apt-get install protobuf-compiler libprotobuf-dev)" >&2; exit 1; }
# registry.proto imports google/protobuf/struct.proto, which protoc finds in
# the include directory beside it (Debian: libprotobuf-dev).
inc="$(dirname "$(command -v protoc)")/../include"
[ -f "$inc/google/protobuf/struct.proto" ] || { echo "proto: google/protobuf/struct.proto not found under $inc (apt-get install libprotobuf-dev)" >&2; exit 1; }
bin="$(go env GOPATH)/bin"
if [ "$("$bin/protoc-gen-go" --version 2>/dev/null)" != "protoc-gen-go $PROTOC_GEN_GO_VERSION" ]; then
  GOFLAGS= go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
fi
if [ "$("$bin/protoc-gen-go-grpc" --version 2>/dev/null)" != "protoc-gen-go-grpc ${PROTOC_GEN_GO_GRPC_VERSION#v}" ]; then
  GOFLAGS= go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
fi

out="${1:-internal/registry/api}"
mkdir -p "$out"
protoc \
  --plugin=protoc-gen-go="$bin/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="$bin/protoc-gen-go-grpc" \
  -I internal/registry/api \
  --go_out="$out" --go_opt=paths=source_relative \
  --go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
  registry.proto
