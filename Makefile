# Build tags: containers/image/v5 needs these to build with cgo and no C -dev
# packages (see docs/development.md).
TAGS    ?= containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X github.com/opmkit/opm/internal/version.Version=$(VERSION) \
           -X github.com/opmkit/opm/internal/version.Commit=$(COMMIT) \
           -X github.com/opmkit/opm/internal/version.Date=$(DATE)
GO      ?= go

.PHONY: build test vet lint bench fuzz docs

build:
	$(GO) build -tags '$(TAGS)' -trimpath -ldflags '$(LDFLAGS)' -o bin/opm ./cmd/opm

test:
	$(GO) test -tags '$(TAGS)' -count=1 ./...

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

# Regenerate the generated parts of docs/.
docs:
	UPDATE_DOCS=1 $(GO) test -tags '$(TAGS)' -count=1 -run 'Docs$$' ./...
