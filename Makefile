# agentbox — the targets read like the README.
#
#   make run          serve MCP + REST locally on the embedded store
#   make test         test tools (npm ci where needed), gofmt, go vet,
#                     staticcheck, go test -race
#   make generate     regenerate every generated file (contracts, template, README tables)
#   make bench-loop   the messaging loop measured from outside (cmd/loopbench)
#   make build        cross-compile the one Lambda binary for arm64
#   make fresh-check  clone this repository into a temporary folder and run
#                     make test and make run there with nothing but Go, make,
#                     git and the package registries (.ci/fresh-check)
#
# Test tools come from the repository, never from the machine: Go programs
# are tool dependencies in go.mod (staticcheck; the Lambda runtime interface
# emulator, which the function tests build from the module cache); npm
# packages come from a committed package-lock.json (see test-deps below);
# a system package a test needs is installed by .ci/need (apt-get as root,
# otherwise a failure naming the one command to run).

ADDR ?= 127.0.0.1:8787
DATA ?= ./.agentbox
GO ?= go
# VERSION, when given, is the version the binaries report (agentbox
# version, MCP serverInfo, OpenAPI info, the functions' logs); without it
# they report internal/version's default.
VERSION ?=
VERSION_LDFLAG := $(if $(VERSION),-X github.com/agentbox/agentbox/internal/version.Version=$(VERSION))

# Lambda builds: static, arm64 (Graviton), no RPC shim (provided.al2023
# speaks the runtime API directly), reproducible paths, no debug info.
# Every function of the template deploys this one binary; the function
# learns its tool from AGENTBOX_FUNCTION (see functions/main.go).
LAMBDA_GOARCH ?= arm64
LAMBDA_ENV := GOOS=linux GOARCH=$(LAMBDA_GOARCH) CGO_ENABLED=0
LAMBDA_FLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w $(VERSION_LDFLAG)'
BUILD_DIR ?= .aws-sam-build
LAMBDA_BIN := $(BUILD_DIR)/bootstrap
GO_SOURCES := go.mod go.sum $(shell find . -path './.*' -prune -o -name '*.go' ! -name '*_test.go' -print)

.PHONY: run test test-deps vet fmt-check staticcheck bench bench-loop contracts template readme generate build clean fresh-check openapi

run:
	@echo "building bin/agentbox (the first build downloads modules and compiles: 30 s to a few minutes, silently)"
	$(GO) build -ldflags '$(VERSION_LDFLAG)' -o bin/agentbox ./cmd/agentbox
	bin/agentbox serve --addr $(ADDR) --data $(DATA)

# The domain package runs every scenario on both storage adapters under the
# race detector: on 2 cores it needs more than go test's default 10 minutes
# per package when the machine is shared, so the bound is raised (a hang
# still ends the run).
test: test-deps fmt-check vet staticcheck
	$(GO) test -race -timeout 30m ./...

# npm test tools. Every folder holding a committed package-lock.json (outside
# node_modules) is a test folder: its lockfile is installed with `npm ci`
# when node_modules is missing or older than the lockfile. The stamp is
# ours, so a half-finished install is redone. npm itself is a system package.
NPM_LOCKS := $(shell find . -path './.*' -prune -o -name node_modules -prune -o -name package-lock.json -print | sed 's|^\./||')
NPM_STAMPS := $(patsubst %package-lock.json,%node_modules/.agentbox-npm-ci,$(NPM_LOCKS))

test-deps: $(NPM_STAMPS) readme-tools

# The README test (TestReadmeTryIt) runs "Try it" as written: bash, curl, jq.
.PHONY: readme-tools
readme-tools:
	@.ci/need curl curl
	@.ci/need jq jq

%node_modules/.agentbox-npm-ci: %package-lock.json
	@.ci/need npm npm
	cd ./$(dir $<) && npm ci --no-audit --no-fund
	touch $@

fmt-check:
	@unformatted="$$(find . -path './.*' -prune -o -name node_modules -prune -o -name '*.go' -print | xargs gofmt -l)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt: these files need formatting (run gofmt -w):"; echo "$$unformatted"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) tool staticcheck ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/hub/... ./internal/store/bolt/... ./internal/server/...

# bench-loop: the messaging loop measured from outside (cmd/loopbench): a
# fresh `agentbox serve` and data directory per run, driven over MCP with
# 256-byte DMs; one round trip at a time, then W senders to one receiver.
# It fails when a run loses, duplicates, invents or reorders a message.
# LOOP_BASE=path/to/another/agentbox runs it too, interleaved run by run
# (give LOOP_RUNS=3 for medians and ratios); the data directories go to
# LOOP_DIR, which must be on the disk to measure (not tmpfs).
LOOP_WORKLOADS ?= rt:500,1x500,4x250,4x2500,16x250
LOOP_RUNS ?= 1
LOOP_DIR ?= $(or $(TMPDIR),/tmp)
LOOP_BASE ?=
bench-loop:
	$(GO) build -ldflags '$(VERSION_LDFLAG)' -o bin/agentbox ./cmd/agentbox
	$(GO) build -o bin/loopbench ./cmd/loopbench
	bin/loopbench $(if $(LOOP_BASE),-bin base=$(LOOP_BASE)) -bin this=bin/agentbox \
		-runs $(LOOP_RUNS) -workloads $(LOOP_WORKLOADS) -dir $(LOOP_DIR)

contracts:
	$(GO) run ./cmd/agentbox contracts > tool-contracts.json.tmp
	mv tool-contracts.json.tmp tool-contracts.json

template:
	$(GO) run ./infra/gen -w template.yaml

readme:
	$(GO) run ./internal/docgen/gen -w README.md

generate: contracts template readme openapi

# openapi.json: the REST contract as OpenAPI 3.1, generated from the
# registry (TestOpenAPIUpToDate fails when it is stale).
openapi:
	$(GO) run ./cmd/agentbox openapi > openapi.json.tmp
	mv openapi.json.tmp openapi.json

build: $(LAMBDA_BIN)

# Built to a temporary name and renamed, so that make processes SAM runs in
# parallel never copy a half-written binary.
$(LAMBDA_BIN): $(GO_SOURCES)
	@mkdir -p $(@D)
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $@.$$$$.tmp ./functions && mv -f $@.$$$$.tmp $@

clean:
	rm -rf bin $(BUILD_DIR) .aws-sam

fresh-check:
	.ci/fresh-check

# SAM's makefile build hook. `sam build` runs `make build-<LogicalId>
# ARTIFACTS_DIR=…` once per function: it never shares a makefile build
# between functions, even with the same CodeUri (aws-sam-cli,
# samcli/lib/build/build_graph.py, FunctionBuildDefinition.__eq__). Every
# function deploys the same binary, so each rule only copies the one build
# above, which make redoes only when a Go source changed.
# infra.TestMakefileBuildsEveryFunction runs these rules for every function
# of template.yaml.
build-%Function: $(LAMBDA_BIN)
	cp $(LAMBDA_BIN) $(ARTIFACTS_DIR)/bootstrap

# ---------------------------------------------------------------------------
# make mutate: mutation testing with gremlins (a go.mod tool) over the
# domain core, the storage adapters and cursors. Not part of `make test` or
# CI. The domain suite runs on the embedded store only
# (AGENTBOX_TEST_ADAPTERS=bolt) with its database files on tmpfs (TMPDIR),
# where fsync costs nothing. Every mutant still compiles the package (about
# 5 s) and runs all of its tests (15-25 s on 2 idle cores; a mutant that
# survives runs every test), so two workers manage about four mutants a
# minute; the timeout coefficient is large because gremlins times the whole
# `go test`, compile included, and a loaded machine must not turn slow runs
# into false kills.
#
# make mutate-core: the messaging core the issues name, inbox.go,
# requests.go, kernel.go and messages.go, one report each (about 400
# mutants: 1.5 h on an idle machine).
#
# make mutate: the wider default file set, the kernel (run, commit, retry,
# idempotency, cursor secret, prime, checkpoint, deactivation), the
# messaging core and the store's write paths; set MUTATE_HUB_EXCLUDE=
# MUTATE_STORE_EXCLUDE= for everything (~1,800 + ~290 mutants: most of a
# day). Reports (JSON) land in MUTATE_OUT.
MUTATE_TMP ?= /dev/shm/agentbox-mutate
MUTATE_OUT ?= .mutate
MUTATE_CORE ?= inbox requests kernel messages
MUTATE_HUB_EXCLUDE ?= ^(spaces|rooms|directory|admin_rooms|admin|auth|memory|keys|session|validate|textfold|types|profile|hub|records|intent|files)\.go$$
MUTATE_STORE_EXCLUDE ?= ^((storetest|teststores|dynamo/dynamotest)/.*|bolt/(query|codec|bolt|sweep)\.go|dynamo/(dynamo|table|codec)\.go)$$
GREMLINS = TMPDIR=$(MUTATE_TMP) AGENTBOX_TEST_ADAPTERS=bolt $(GO) tool gremlins unleash --workers 2 --timeout-coefficient 30

.PHONY: mutate mutate-core
mutate:
	@mkdir -p $(MUTATE_TMP) $(MUTATE_OUT)
	$(GREMLINS) -o $(MUTATE_OUT)/cursor.json ./internal/cursor
	$(GREMLINS) -o $(MUTATE_OUT)/store.json $(if $(MUTATE_STORE_EXCLUDE),-E '$(MUTATE_STORE_EXCLUDE)') ./internal/store
	$(GREMLINS) -o $(MUTATE_OUT)/hub.json $(if $(MUTATE_HUB_EXCLUDE),-E '$(MUTATE_HUB_EXCLUDE)') ./internal/hub

# Each run excludes every other file of the package (and its subpackages),
# so a report holds one file's mutants.
mutate-core:
	@mkdir -p $(MUTATE_TMP) $(MUTATE_OUT)
	@set -e; all=$$(cd internal/hub && ls *.go | grep -v '_test\.go$$' | sed 's/\.go$$//'); \
	for f in $(MUTATE_CORE); do \
	  others=$$(echo "$$all" | grep -vx "$$f" | paste -sd'|' -); \
	  echo "== gremlins on internal/hub/$$f.go"; \
	  $(GREMLINS) -o $(MUTATE_OUT)/$$f.json -E "^($$others)\.go\$$" -E '^(table|hubtest|registrytest)/' ./internal/hub; \
	done

# ---- operator view (issue 15): browser test prerequisites and screenshots ----
# The view's tests drive Debian's headless Chromium. test-deps installs it
# when missing and running as root; otherwise it fails with the command.
.PHONY: chromium screenshots
test-deps: chromium
chromium:
	@.ci/need chromium chromium

# screenshots writes PNGs of the view's main pages from the test fixture.
screenshots: test-deps
	mkdir -p docs/screenshots
	SCREENSHOTS_DIR=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run '^(TestBrowser(Panels)?|TestComposeBrowser)$$' ./internal/opview
# ---- end operator view ----
