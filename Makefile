# Build tags: containers/image/v5 needs these to build with cgo and no C -dev
# packages (see CONTRIBUTING.md).
TAGS    ?= containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X github.com/opmkit/opm/internal/version.Version=$(VERSION) \
           -X github.com/opmkit/opm/internal/version.Commit=$(COMMIT) \
           -X github.com/opmkit/opm/internal/version.Date=$(DATE)
GO      ?= go

.PHONY: build test vet lint bench fuzz docs completions man release-check release-snapshot release-cross-check serving-image proto

build:
	$(GO) build -tags '$(TAGS)' -trimpath -ldflags '$(LDFLAGS)' -o bin/opm ./cmd/opm

test:
	$(GO) test -tags '$(TAGS)' -count=1 ./...
	$(GO) test -count=1 -run Untagged ./internal/image/  # a build without the tags: signature policy still honoured
	cd test/olmclient && $(GO) test -count=1 ./...
	cd test/apiverdicts && $(GO) test -count=1 -v ./...  # -v: prints the verdict counts (agree / deliberate difference)
	@# OLM v0's recorded answers replayed against internal/resolve: the counts, and any difference.
	@out=$$($(GO) test -tags '$(TAGS)' -count=1 -v -run '^TestOLMv0Answers$$' ./internal/resolve/ 2>&1); status=$$?; \
	  printf '%s\n' "$$out" | grep -E -A4 'olmv0 answers|differs from OLM|no recorded|SKIP|^(--- FAIL|FAIL|ok)'; exit $$status
	@out=$$($(GO) test -tags '$(TAGS)' -count=1 -v -run '^(TestOLMv1(Answers|Ranges)|TestUpgradePathOLMv1AgreesWithOperatorController)$$' ./internal/resolve/ 2>&1); rc=$$?; \
	  printf '%s\n' "$$out" | grep -E '^(olmv1 |--- FAIL|FAIL|panic|ok )|_test\.go:[0-9]+:'; exit $$rc  # operator-controller's recorded answers (and upgrade-path --olmv1 on them): counts and failures

vet:
	$(GO) vet -tags '$(TAGS)' ./...

lint: vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	golangci-lint run --build-tags '$(TAGS)' ./...

bench:
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench . -benchmem ./...

# Short fuzzing pass over every fuzz target (FUZZTIME per target).
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -tags '$(TAGS)' -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    $(GO) test -tags '$(TAGS)' -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Regenerate the generated parts of docs/: the command reference, the
# validation rules, and the upgrade-graph pictures under docs/images.
docs:
	UPDATE_DOCS=1 $(GO) test -tags '$(TAGS)' -count=1 -run 'Docs$$' ./...

# Regenerate internal/registry/api from registry.proto (protoc from Debian's
# protobuf-compiler; the pinned protoc-gen-go and protoc-gen-go-grpc are
# installed into GOPATH/bin when missing). TestGeneratedCodeIsCurrent fails
# while the committed code is stale.
proto:
	hack/proto.sh

# Shell completions and man pages (section 1) from the command tree, into
# build/ (the release archives ship them). Run with an empty environment so
# that no OPM_* variable or config file changes them.
completions:
	@mkdir -p build/completions
	$(GO) build -tags '$(TAGS)' -o build/opm-host ./cmd/opm
	@for sh in bash zsh fish; do \
	  env -i PATH="$$PATH" HOME=/nonexistent build/opm-host completion $$sh > build/completions/opm.$$sh || exit 1; \
	done
	@ls build/completions

man:
	@rm -rf build/man && mkdir -p build/man
	MAN_DIR=$(CURDIR)/build/man $(GO) test -tags '$(TAGS)' -count=1 -run '^TestManPages$$' ./internal/cmd/root
	@ls build/man

# Releases (goreleaser; see docs/releasing.md). goreleaser takes minutes to
# build, so it is installed once into GOPATH/bin and reused.
GORELEASER_VERSION ?= v2.16.0
GORELEASER ?= $(shell $(GO) env GOPATH)/bin/goreleaser

$(GORELEASER):
	$(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

release-check: $(GORELEASER)
	$(GORELEASER) check

# linux/amd64 and linux/arm64 archives in dist/ (arm64 needs Debian's
# gcc-aarch64-linux-gnu). Nothing is published. The cross compiler is
# checked first, before goreleaser is installed or anything is built.
release-snapshot: release-cross-check $(GORELEASER)
	$(GORELEASER) release --snapshot --clean --skip=publish

release-cross-check:
	@command -v aarch64-linux-gnu-gcc >/dev/null && test -e /usr/aarch64-linux-gnu/lib/libc.a || { \
	  echo "make release-snapshot builds linux/arm64 too, statically, with Debian's cross compiler, which is missing here."; \
	  echo "Install it:  apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross"; \
	  echo "(see docs/releasing.md; a linux/amd64 binary alone is what 'make build' makes)"; \
	  exit 1; }

# opm's serving image (the default --binary-image of new index images), built
# without a container daemon from static opm binaries and Debian's
# busybox-static, pushed to IMAGE or written to IMAGE=oci:DIR:TAG. PLATFORMS
# defaults to every linux platform whose C compiler is installed. See
# docs/releasing.md.
IMAGE ?=
PLATFORMS ?=
serving-image:
	GO='$(GO)' TAGS='$(TAGS)' VERSION='$(VERSION)' COMMIT='$(COMMIT)' hack/make-serving-image '$(IMAGE)' '$(PLATFORMS)'
