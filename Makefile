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

.PHONY: run test vet fmt-check staticcheck bench contracts template functions readme generate build clean openapi

run:
	$(GO) build -o bin/agentbox ./cmd/agentbox
	bin/agentbox serve --addr $(ADDR) --data $(DATA)

test: fmt-check vet staticcheck
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

generate: contracts template functions readme openapi

# --- MCP/OpenAPI (wip-mcp) -------------------------------------------
# openapi.json: the REST contract as OpenAPI 3.1, generated from the
# registry (TestOpenAPIUpToDate fails when it is stale).
openapi:
	$(GO) run ./cmd/agentbox openapi > openapi.json.tmp
	mv openapi.json.tmp openapi.json
# ----------------------------------------------------------------------

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
