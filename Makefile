# agentbox — the targets read like the README.
#
#   make run        serve MCP + REST locally on the embedded store
#   make test       gofmt, go vet, staticcheck, go test -race
#   make generate   regenerate every generated file (contracts, template, functions, README tables)
#   make build      cross-compile every Lambda function for arm64
#
# SAM calls build-<LogicalId> (e.g. build-CheckpointSaveFunction) through
# the template's `BuildMethod: makefile`; see the pattern rule at the end.

ADDR ?= 127.0.0.1:8787
DATA ?= ./.agentbox
GO ?= go

# Lambda builds: static, arm64 (Graviton), no RPC shim (provided.al2023
# speaks the runtime API directly), reproducible paths, no debug info.
LAMBDA_ENV := GOOS=linux GOARCH=arm64 CGO_ENABLED=0
LAMBDA_FLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w'
BUILD_DIR ?= .aws-sam-build

.PHONY: run test vet fmt-check staticcheck bench contracts template functions readme generate build clean

run:
	$(GO) build -o bin/agentbox ./cmd/agentbox
	bin/agentbox serve --addr $(ADDR) --data $(DATA)

test: fmt-check vet staticcheck test-deps
	$(GO) test -race ./...

fmt-check:
	@unformatted="$$(find . -path './.*' -prune -o -name '*.go' -print | xargs gofmt -l)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt: these files need formatting (run gofmt -w):"; echo "$$unformatted"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) tool staticcheck ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/hub/...

contracts:
	$(GO) run ./cmd/agentbox contracts > tool-contracts.json.tmp
	mv tool-contracts.json.tmp tool-contracts.json

template:
	$(GO) run ./infra/gen -w template.yaml

functions:
	$(GO) run ./internal/lambdafn/gen

readme:
	$(GO) run ./internal/docgen/gen -w README.md

generate: contracts template functions readme

build:
	@set -e; for f in $$(ls functions); do \
		echo "build $$f"; \
		$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(BUILD_DIR)/$$f/bootstrap ./functions/$$f; \
	done

clean:
	rm -rf bin $(BUILD_DIR) .aws-sam

# SAM's makefile build hook: CheckpointSaveFunction -> functions/checkpoint_save,
# McpFunction -> functions/mcp. infra.TestLogicalIDRoundTrip proves every
# logical id maps back to its tool.
build-%Function:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) \
		-o $(ARTIFACTS_DIR)/bootstrap \
		./functions/$$(echo '$*' | sed -E 's/([a-z0-9])([A-Z])/\1_\2/g' | tr '[:upper:]' '[:lower:]')

# ---------------------------------------------------------------------------
# make mutate: mutation testing with gremlins (a go.mod tool) over the
# domain core, the storage adapters and cursors. Not part of `make test` or
# CI. Test filters keep it to minutes: the domain suite runs on the embedded
# store only (AGENTBOX_TEST_ADAPTERS=bolt) with its database files on tmpfs
# (TMPDIR), where fsync costs nothing, so a mutant's run is about a second
# and compiling it dominates (~10 s per mutant per worker on 2 cores; hence
# the large timeout coefficient: gremlins times the whole `go test`, compile
# included). The default file set is the kernel (run, commit, retry, idempotency, cursor
# secret, prime, checkpoint, deactivation) and the store's write paths; set
# MUTATE_HUB_EXCLUDE= MUTATE_STORE_EXCLUDE= for everything (~900 + ~290
# mutants: hours). Reports (JSON) land in MUTATE_OUT.
MUTATE_TMP ?= /dev/shm/agentbox-mutate
MUTATE_OUT ?= .mutate
MUTATE_HUB_EXCLUDE ?= ^(messages|spaces|rooms|directory|admin_rooms|admin|auth|memory|keys|session|validate|textfold|types|profile|hub|records|intent|files)\.go$$
MUTATE_STORE_EXCLUDE ?= ^((storetest|teststores|dynamo/dynamotest)/.*|bolt/(query|codec|bolt|sweep)\.go|dynamo/(dynamo|table|codec)\.go)$$
GREMLINS = TMPDIR=$(MUTATE_TMP) AGENTBOX_TEST_ADAPTERS=bolt $(GO) tool gremlins unleash --workers 2 --timeout-coefficient 30

.PHONY: mutate
mutate:
	@mkdir -p $(MUTATE_TMP) $(MUTATE_OUT)
	$(GREMLINS) -o $(MUTATE_OUT)/cursor.json ./internal/cursor
	$(GREMLINS) -o $(MUTATE_OUT)/store.json $(if $(MUTATE_STORE_EXCLUDE),-E '$(MUTATE_STORE_EXCLUDE)') ./internal/store
	$(GREMLINS) -o $(MUTATE_OUT)/hub.json $(if $(MUTATE_HUB_EXCLUDE),-E '$(MUTATE_HUB_EXCLUDE)') ./internal/hub

# ---- operator view (issue 15): browser test prerequisites and screenshots ----
# The view's tests drive Debian's headless Chromium. test-deps installs it
# when missing and running as root; otherwise it fails with the command.
.PHONY: test-deps screenshots
test-deps:
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update && apt-get install -y chromium; \
		else \
			echo "chromium is missing: run 'apt-get update && apt-get install -y chromium' as root"; exit 1; \
		fi; }

# screenshots writes PNGs of the view's main pages from the test fixture.
screenshots: test-deps
	mkdir -p docs/screenshots
	SCREENSHOTS_DIR=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run '^TestBrowser$$' ./internal/opview
# ---- end operator view ----
