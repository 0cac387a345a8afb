# groundcrew — the two commands are `make run` and `make test`.
#
# Every Go command runs per module with GOWORK=off, so each module's go.mod
# is proven complete on its own (as Docker builds and other teams see it).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

MODULES  := gen platform services/search services/grounding services/rag services/notifier gateway e2e tools/openapi3
SERVICES := search grounding rag notifier
BIN      := $(CURDIR)/bin
BUF      := $(BIN)/buf
HELM     := $(BIN)/helm
GOTEST_FLAGS ?= -count=1
# With TEST_DATABASE_URL set (.ci/run starts a throwaway PostgreSQL), the
# Postgres-only tests run, and these modules' tests run a second time with
# DATABASE_URL set to it: every store, queue, RPC and whole-service test
# that opens its database through sqlstoretest.URL then runs on PostgreSQL,
# each test in a schema of its own. (rag and the gateway keep no
# SQL database; e2e runs each scenario on both already; search runs its
# index contract, replica and kill tests there.)
DB_MODULES := platform services/grounding services/notifier services/search
# Compare protos against this for breaking changes (a buf input).
BREAKING_AGAINST ?= .git\#branch=main,subdir=proto

export GOWORK := off
export GOFLAGS := -buildvcs=false

.PHONY: help
help: ## List the targets.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

.PHONY: run
run: build ## Build and start all four services and the gateway on embedded defaults.
	@scripts/run.sh

.PHONY: test
test: proto-check fmt-check test-console deploy-check vulncheck test-go test-readme fuzz ## Run every check and test (what CI runs).

# What `<binary> --version` prints (platform/entrypoint).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
GO_LDFLAGS := -X github.com/groundcrew/groundcrew/platform/entrypoint.Version=$(VERSION) -X github.com/groundcrew/groundcrew/platform/entrypoint.Commit=$(COMMIT)
GO_BUILD := go build -trimpath -ldflags '$(GO_LDFLAGS)'

.PHONY: build
build: ## Build every binary into bin/.
	@mkdir -p $(BIN)
	@for s in $(SERVICES); do echo "build $$s"; (cd services/$$s && $(GO_BUILD) -o $(BIN)/$$s .); done
	@echo "build gateway"; cd gateway && $(GO_BUILD) -o $(BIN)/gateway .
	@echo "build search-index"; cd services/search && $(GO_BUILD) -o $(BIN)/search-index ./cmd/search-index
	@echo "build rag-ingest"; cd services/rag && $(GO_BUILD) -o $(BIN)/rag-ingest ./cmd/rag-ingest

.PHONY: test-readme
test-readme: build ## Run README.md's tour (its ```sh runnable blocks) against a stack started on free ports.
	@scripts/readme-tour.sh

.PHONY: tools
tools: $(BUF) $(HELM) ## Build the pinned code generators and helm into bin/.
$(BUF): tools/go.mod tools/go.sum
	@mkdir -p $(BIN)
	go -C tools build -o $(BIN)/ tool
	@touch $(BUF)
# helm is one of tools/go.mod's `tool` lines, so the rule above builds it;
# this one covers a bin/ left by an older tools/go.mod without it.
$(HELM): $(BUF)
	@test -x $@ || go -C tools build -o $(BIN)/ helm.sh/helm/v3/cmd/helm

# The chart's value sets that must render: the defaults plus every
# deploy/helm/groundcrew/ci/*-values.yaml. tools/deploycheck decodes the
# renderings strictly and checks what they must hold (and what must fail).
CHART := deploy/helm/groundcrew
PROMTOOL ?= promtool

.PHONY: deploy-check
deploy-check: $(HELM) ## helm lint and render the chart; promtool check and test the rules.
	@for f in "" $(CHART)/ci/*-values.yaml; do \
		echo "helm lint --strict $(CHART) $${f:+-f $$f}"; \
		$(HELM) lint --strict --quiet $(CHART) $${f:+-f "$$f"} >/dev/null || { $(HELM) lint --strict $(CHART) $${f:+-f "$$f"}; exit 1; }; \
		$(HELM) template gc $(CHART) $${f:+-f "$$f"} >/dev/null; \
	done
	@echo "helm template $(CHART) --set search.replicas=2 must fail without search.database, saying why"; \
	if out=$$($(HELM) template gc $(CHART) --set search.replicas=2 2>&1); then \
		echo "the chart rendered two replicas of search's embedded index"; exit 1; \
	fi; grep -q "runs one replica.*search.database.existingSecret" <<<"$$out" || { echo "$$out"; exit 1; }
	@echo "helm template $(CHART) with search.database and search.replicas=3 must render three replicas"; \
	$(HELM) template gc $(CHART) --set search.replicas=3 --set search.database.existingSecret=groundcrew-postgres \
		| grep -A12 '^kind: Deployment' | grep -A10 'name: gc-groundcrew-search$$' | grep -q 'replicas: 3' \
		|| { echo "search did not render three replicas with a database"; exit 1; }
	@if ! command -v $(PROMTOOL) >/dev/null 2>&1; then \
		if [ -n "$${GROUNDCREW_CI:-}" ]; then echo "promtool is missing (Debian package prometheus); .ci/run installs it" >&2; exit 1; fi; \
		echo "== promtool not found: rules not checked (apt-get install prometheus; CI fails instead)"; exit 0; \
	fi; \
	$(PROMTOOL) check rules deploy/prometheus/*.rules.yml && \
	$(PROMTOOL) test rules deploy/prometheus/*.rules_test.yml

.PHONY: generate
generate: tools ## Format the protos and regenerate gen/.
	$(BUF) format -w
	$(BUF) generate
	@# The OpenAPI 3 document /openapi.json serves, from the Swagger 2.0 one.
	cd tools/openapi3 && go run . -in ../../gen/openapi/groundcrew.swagger.json -out ../../gen/openapi/groundcrew.openapi.json
	$(MAKE) --no-print-directory console

# The console (web/console): its TypeScript client is generated from the
# OpenAPI 3 document and its built assets are committed under
# gateway/internal/console/dist, so `make run` needs only Go. Node and npm
# (versions pinned in web/console/package-lock.json) are needed only here.
CONSOLE := web/console
CONSOLE_GENERATED := $(CONSOLE)/src/api gateway/internal/console/dist

.PHONY: console
console: ## Regenerate the console's typed API client and rebuild its embedded assets (needs Node 20 and npm).
	cd $(CONSOLE) && npm ci --no-audit --no-fund --loglevel=error && npm run generate && npm run build

.PHONY: test-console
test-console: ## Type-check the console and its generated client against the OpenAPI document (tsc).
	cd $(CONSOLE) && npm ci --no-audit --no-fund --loglevel=error && npm run generate && npm run typecheck

.PHONY: screenshots
screenshots: ## PNGs of every console page at desktop and phone width into docs/console/ (needs Chromium).
	cd e2e && GROUNDCREW_SCREENSHOTS=$(CURDIR)/docs/console go test -count=1 -run '^TestConsoleScreenshots$$' ./console

.PHONY: proto-check
proto-check: proto-lint proto-breaking check-generate ## buf lint, format, breaking and generate-drift checks.

.PHONY: proto-lint
proto-lint: tools
	$(BUF) lint
	$(BUF) format --diff --exit-code

.PHONY: proto-breaking
proto-breaking: tools
	@if git rev-parse --verify -q main >/dev/null && git cat-file -e main:proto 2>/dev/null; then \
		echo "buf breaking against $(BREAKING_AGAINST)"; \
		$(BUF) breaking proto --against '$(BREAKING_AGAINST)'; \
	else \
		echo "buf breaking: no main branch with proto/ to compare against; nothing to check"; \
	fi

.PHONY: check-generate
check-generate: generate ## Fail when `make generate` changes gen/ or the console's client and assets.
	@if [ -n "$$(git status --porcelain -- gen proto $(CONSOLE_GENERATED))" ]; then \
		echo "generated code is out of date; run 'make generate' and commit:"; \
		git status --porcelain -- gen proto $(CONSOLE_GENERATED); git --no-pager diff --stat -- gen proto $(CONSOLE_GENERATED); exit 1; \
	fi

.PHONY: test-go
# The tidy check fails on go.mod only. go.sum lines for test-only
# dependencies of dependencies (modernc.org/sqlite's google/pprof) come and
# go with what the module proxy serves (it has answered 403 for them), and
# builds with -mod=readonly already fail on a go.sum missing what they need.
test-go: ## go vet and go test in every module.
	@fail=0; for m in $(MODULES); do \
		echo "== $$m"; \
		tidy=$$(cd $$m && go mod tidy -e -diff 2>/dev/null) || true; \
		if grep -q '^diff current/go.mod' <<<"$$tidy"; then echo "$$m: go.mod is not tidy: run 'make tidy'"; fail=1; \
		elif [ -n "$$tidy" ]; then echo "note: $$m: go.sum differs from what 'go mod tidy' writes with this module proxy (builds check go.sum themselves)"; fi; \
		(cd $$m && go vet ./... && DATABASE_URL= go test $(GOTEST_FLAGS) ./...) || fail=1; \
	done; \
	echo "== tools (compose, Dockerfile and Markdown link checks)"; \
	(cd tools && go test $(GOTEST_FLAGS) ./...) || fail=1; \
	$(MAKE) --no-print-directory test-postgres || fail=1; \
	exit $$fail

.PHONY: test-postgres
test-postgres: ## The database-backed modules' tests again, on PostgreSQL (TEST_DATABASE_URL).
	@if [ -z "$(TEST_DATABASE_URL)" ]; then \
		echo "== PostgreSQL pass skipped: TEST_DATABASE_URL is unset (scripts/ci-postgres.sh starts a throwaway server; .ci/run does)"; exit 0; \
	fi; \
	fail=0; for m in $(DB_MODULES); do \
		echo "== $$m on PostgreSQL (DATABASE_URL=TEST_DATABASE_URL)"; \
		(cd $$m && DATABASE_URL='$(TEST_DATABASE_URL)' go test $(GOTEST_FLAGS) ./...) || fail=1; \
	done; \
	exit $$fail

# Fuzz targets (package dir:function) run for FUZZTIME each in `make test`.
# A count, not a duration: a time budget can expire before the fuzzer's
# baseline run on a cold, busy machine ("context deadline exceeded");
# their seed corpora also run as plain tests in test-go.
FUZZ_TARGETS := \
	services/notifier/internal/alert:FuzzFromAlertmanager \
	services/notifier/internal/alert:FuzzFromGrafana \
	services/notifier/internal/alert:FuzzGeneric \
	services/notifier/internal/format:FuzzFormat \
	services/notifier/internal/format:FuzzFormatGroup \
	services/notifier/internal/notifiergrpc:FuzzTelegramUpdate \
	services/notifier/internal/markdownv2:FuzzParse \
	services/notifier/internal/oncall:FuzzShifts \
	services/notifier/internal/markdownv2:FuzzEscapeRoundTrip \
	services/search/internal/htmltext:FuzzExtract \
	platform/weburl:FuzzCanonical \
	services/grounding/internal/extractive:FuzzTrimSummary \
	services/grounding/internal/queryextract:FuzzDerive \
	services/grounding/internal/textoffset:FuzzOffsets \
	services/grounding/internal/store:FuzzRedact \
	gateway/internal/codec:FuzzDepth
FUZZTIME ?= 20000x
# How long the fuzzer may shrink an input it found interesting (Go's
# default, 60 s, stalled FuzzFormat at 0 execs/s for a minute per new
# input in CI); a failing input is still shrunk this long before it is
# written to testdata/fuzz.
FUZZMINIMIZETIME ?= 10s

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME (default 20000 inputs) each.
	@for t in $(FUZZ_TARGETS); do \
		dir=$${t%%:*}; fn=$${t##*:}; mod=$$dir; \
		while [ ! -f $$mod/go.mod ]; do mod=$$(dirname $$mod); done; pkg=./$${dir#$$mod/}; \
		echo "fuzz $$fn ($$dir) for $(FUZZTIME)"; \
		(cd $$mod && go test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg) || exit 1; \
	done

# govulncheck (pinned in tools/go.mod) against the Go vulnerability
# database: GOVULNDB, a URL or a file:// mirror, else vuln.go.dev. When the
# database cannot be reached (an offline build machine) the check is
# skipped with a note, not failed.
GOVULNDB ?= https://vuln.go.dev

.PHONY: vulncheck
vulncheck: ## govulncheck every module (skipped with a note when GOVULNDB is unreachable).
	@db='$(GOVULNDB)'; \
	case "$$db" in \
		file://*) test -f "$${db#file://}/index/db.json" && reach=1 || reach= ;; \
		*) curl -fsS --max-time 10 -o /dev/null "$$db/index/db.json" 2>/dev/null && reach=1 || reach= ;; \
	esac; \
	if [ -z "$$reach" ]; then echo "== govulncheck skipped: the vulnerability database $$db is not reachable (set GOVULNDB to a mirror, e.g. file:///srv/vulndb)"; exit 0; fi; \
	mkdir -p $(BIN) && go -C tools build -o $(BIN)/govulncheck golang.org/x/vuln/cmd/govulncheck; \
	fail=0; for m in $(MODULES); do \
		echo "== govulncheck $$m ($$db)"; \
		(cd $$m && $(BIN)/govulncheck -db "$$db" ./...) || fail=1; \
	done; exit $$fail

.PHONY: fmt-check
fmt-check: ## Fail when a Go file is not gofmt-formatted.
	@files=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); \
	if [ -n "$$files" ]; then echo "not gofmt-formatted (run 'make fmt'):"; echo "$$files"; exit 1; fi

.PHONY: fmt
fmt: ## gofmt every module.
	gofmt -w $$(git ls-files '*.go' | grep -v '^gen/')

.PHONY: tidy
tidy: ## go mod tidy in every module (not tools: buf as a tool breaks tidy there).
	@# -e: modernc.org/sqlite's own tests want a google/pprof version the proxy
	@# refuses (403); builds and tests are unaffected.
	@for m in $(MODULES); do (cd $$m && go mod tidy -e); done

# The labelled evaluation sets (docs/evaluation.md): enrichment citation
# precision, recall and abstention and the research figures on the tuning
# and held-out parts (search and grounding run in-process, offline), then
# the fourth held-out part over its own runbooks added to the corpus, then
# rag-eval's retrieval, scope and answer figures on the Go specification's
# held-out questions. Figures go in BENCHMARKS.md.
.PHONY: eval
eval: ## Run the labelled evaluation sets: enrichment, research and rag answers (docs/evaluation.md).
	cd e2e && go run ./cmd/enrich-eval
	cd e2e && go run ./cmd/enrich-eval -alerts $(CURDIR)/eval/heldout4/alerts.json -topics $(CURDIR)/eval/heldout4/research.json -runbooks $(CURDIR)/examples/runbooks,$(CURDIR)/eval/heldout4/runbooks
	cd e2e && go run ./cmd/enrich-eval -alerts $(CURDIR)/eval/heldout5/alerts.json -topics $(CURDIR)/eval/heldout5/research.json -runbooks $(CURDIR)/examples/runbooks,$(CURDIR)/eval/heldout4/runbooks,$(CURDIR)/eval/heldout5/runbooks
	cd e2e && go run ./cmd/enrich-eval -alerts $(CURDIR)/eval/heldout6/alerts.json -topics $(CURDIR)/eval/heldout6/research.json -runbooks $(CURDIR)/examples/runbooks,$(CURDIR)/eval/heldout4/runbooks,$(CURDIR)/eval/heldout5/runbooks,$(CURDIR)/eval/heldout6/runbooks
	cd e2e && go run ./cmd/enrich-eval -alerts $(CURDIR)/eval/heldout7/alerts.json -topics $(CURDIR)/eval/heldout7/research.json -runbooks $(CURDIR)/examples/runbooks,$(CURDIR)/eval/heldout4/runbooks,$(CURDIR)/eval/heldout5/runbooks,$(CURDIR)/eval/heldout6/runbooks,$(CURDIR)/eval/heldout7/runbooks
	cd e2e && go run ./cmd/enrich-eval -alerts '' -topics $(CURDIR)/eval/heldout8/research.json,$(CURDIR)/eval/heldout9/research.json,$(CURDIR)/eval/heldout10/research.json,$(CURDIR)/eval/heldout11/research.json,$(CURDIR)/eval/heldout12/research.json,$(CURDIR)/eval/heldout13/research.json,$(CURDIR)/eval/heldout14/research.json,$(CURDIR)/eval/heldout15/research.json,$(CURDIR)/eval/heldout16/research.json,$(CURDIR)/eval/heldout17/research.json,$(CURDIR)/eval/heldout18/research.json,$(CURDIR)/eval/heldout19/research.json,$(CURDIR)/eval/heldout20/research.json,$(CURDIR)/eval/heldout21/research.json,$(CURDIR)/eval/heldout22/research.json,$(CURDIR)/eval/heldout23/research.json,$(CURDIR)/eval/heldout24/research.json,$(CURDIR)/eval/heldout25/research.json,$(CURDIR)/eval/heldout26/research.json,$(CURDIR)/eval/heldout27/research.json,$(CURDIR)/eval/heldout28/research.json,$(CURDIR)/eval/heldout29/research.json,$(CURDIR)/eval/heldout30/research.json,$(CURDIR)/eval/heldout31/research.json,$(CURDIR)/eval/heldout32/research.json,$(CURDIR)/eval/heldout33/research.json,$(CURDIR)/eval/heldout34/research.json,$(CURDIR)/eval/heldout35/research.json,$(CURDIR)/eval/heldout36/research.json,$(CURDIR)/eval/heldout37/research.json,$(CURDIR)/eval/heldout38/research.json,$(CURDIR)/eval/heldout39/research.json,$(CURDIR)/eval/heldout40/research.json,$(CURDIR)/eval/heldout41/research.json,$(CURDIR)/eval/heldout42/research.json,$(CURDIR)/eval/heldout43/research.json,$(CURDIR)/eval/heldout44/research.json,$(CURDIR)/eval/heldout45/research.json,$(CURDIR)/eval/heldout46/research.json,$(CURDIR)/eval/heldout47/research.json,$(CURDIR)/eval/heldout48/research.json,$(CURDIR)/eval/heldout49/research.json,$(CURDIR)/eval/heldout50/research.json,$(CURDIR)/eval/heldout51/research.json,$(CURDIR)/eval/heldout52/research.json,$(CURDIR)/eval/heldout53/research.json,$(CURDIR)/eval/heldout54/research.json,$(CURDIR)/eval/heldout55/research.json,$(CURDIR)/eval/heldout56/research.json,$(CURDIR)/eval/heldout57/research.json,$(CURDIR)/eval/heldout58/research.json,$(CURDIR)/eval/heldout59/research.json -runbooks $(CURDIR)/examples/runbooks,$(CURDIR)/eval/heldout4/runbooks,$(CURDIR)/eval/heldout5/runbooks,$(CURDIR)/eval/heldout6/runbooks,$(CURDIR)/eval/heldout7/runbooks
	cd services/rag && go run ./cmd/rag-eval -questions testdata/gospec_questions.json,testdata/gospec_heldout3.json,testdata/gospec_heldout4.json,testdata/gospec_heldout5.json,testdata/gospec_heldout6.json,testdata/gospec_heldout7.json,testdata/gospec_heldout8.json,testdata/gospec_heldout9.json

.PHONY: bench
bench: ## Run the Go benchmarks (figures go in BENCHMARKS.md).
	@for m in $(MODULES); do (cd $$m && go test -run '^$$' -bench . -benchmem ./...); done

.PHONY: load-tools
load-tools: ## Install the pinned load generators (ghz, hey, our open-loop loadgen) into bin/.
	GOBIN=$(BIN) go install github.com/bojand/ghz/cmd/ghz@v0.120.0
	GOBIN=$(BIN) go install github.com/rakyll/hey@v0.1.5
	go -C tools build -o $(BIN)/loadgen ./loadgen

.PHONY: load-gateway
load-gateway: build load-tools ## REST through the gateway vs direct gRPC, side by side (BENCHMARKS.md).
	@scripts/load-gateway.sh

# The soak and fault runs (issue #8; results in BENCHMARKS.md). They run the
# built binaries against local provider stand-ins: DATABASE_URL=postgres://…
# runs grounding and notifier on PostgreSQL instead of SQLite.
SOAK_RATE     ?= 200
SOAK_DURATION ?= 10m
FAULTS_RATE     ?= 50
FAULTS_DURATION ?= 3m
STACKLOAD := cd e2e && go run ./cmd/stackload -bin $(BIN) -runbooks $(CURDIR)/examples/runbooks -database-url "$(DATABASE_URL)"

.PHONY: soak
soak: build ## SOAK_RATE alerts/s for SOAK_DURATION against the offline stack and a Telegram stand-in.
	$(STACKLOAD) -providers telegram -rate $(SOAK_RATE) -duration $(SOAK_DURATION)

.PHONY: faults
faults: build ## The stack with Gemini, Exa, Groq and Telegram failing 30% of requests, plus RPC deadline probes.
	$(STACKLOAD) -providers all -faults 0.3 -rate $(FAULTS_RATE) -duration $(FAULTS_DURATION)

.PHONY: clean
clean: ## Remove built binaries (not data).
	rm -rf $(BIN)
