# Switchboard: the two commands a newcomer needs are `make demo` (the main job) and `make test`.
SHELL := /bin/bash
BIN   := $(CURDIR)/bin
GO    ?= go
# Counts, not durations: a -fuzztime duration races Go's own fuzz coordinator and can fail a
# target with "context deadline exceeded" having found nothing (go.dev/issue/75804).
FUZZTIME ?= 50000x
FUZZMINIMIZETIME ?= 2000x
# Every Go package of ours (node_modules can hold stray Go packages).
PKGS = $$($(GO) list ./... | grep -v /node_modules/)

.PHONY: test-keyring-deps
.PHONY: build demo test test-go test-bench-smoke test-fuzz test-nvim test-vscode test-vscode-e2e package-vscode package-vscode-all bench clean

build:
	$(GO) build -o $(BIN)/switchboard ./cmd/switchboard
	$(GO) build -o $(BIN)/mcptest ./cmd/mcptest

# The main job: connect the demo MCP servers (real subprocesses, one of them broken on purpose)
# and print every server's state and tools. `check` exits 1 because the broken server failed.
demo: build
	@$(BIN)/mcptest --name web --http 127.0.0.1:8765 2>/dev/null & web=$$!; \
	  SWITCHBOARD_DEMO_BIN=$(BIN) XDG_CONFIG_HOME=$$(mktemp -d) $(BIN)/switchboard check --config cmd/mcptest/demo.json; \
	  rc=$$?; kill $$web 2>/dev/null; echo; \
	  echo "switchboard check exited $$rc (1 is expected: the server 'flaky' exits at start on purpose)"

# Everything CI runs. Each editor tier installs what it needs itself (apt, npm).
test: test-go test-bench-smoke test-fuzz test-nvim test-vscode test-vscode-e2e

test-go: test-keyring-deps
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# The OAuth token store's keychain test runs a real Secret Service (gnome-keyring in its own D-Bus
# session): install it the way the editor tiers install theirs.
test-keyring-deps:
	@command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dbus gnome-keyring >/dev/null; }

# Short runs of every fuzz target; their corpora live under testdata/fuzz.
test-fuzz:
	@set -e; for pkg in $(PKGS); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg; \
	  done; \
	done

test-nvim:
	bash editors/nvim/tests/run-all.sh

test-vscode:
	bash editors/vscode/scripts/test.sh

# The node tier also builds this machine's platform .vsix (with its switchboard binary), which the
# e2e workbench installs and runs.
test-vscode-e2e:
	bash editors/vscode/e2e/setup.sh
	bash editors/vscode/e2e/run.sh

# The VS Code extension with the switchboard binary inside, in editors/vscode/vsix/: this machine's
# platform, or every platform (cross-compiled, CGO_ENABLED=0; measured 10 min with a cold Go cache
# on 2 busy shared cores, 22-178 s per target).
package-vscode:
	cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error && bash scripts/package.sh host

package-vscode-all:
	cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error && bash scripts/package.sh

# Every figure in BENCHMARKS.md: the Go benchmarks (each ratio measured within one run), the
# side-by-side table against a bare mcp-go client and mcp-hub, and the per-call table (tool-count
# sweep, server-everything, first call after start). Output also goes to bench.out.
bench:
	@set -o pipefail; { \
	  echo "== $$(date -u +%FT%TZ) $$(nproc) CPUs, $$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $$($(GO) version)"; \
	  $(GO) test -run '^$$' -bench 'Gate|Match' -benchmem -count 3 ./permissions/ && \
	  $(GO) test -run '^$$' -bench 'LoopPerToolCall|CallToolCount' -benchmem -count 3 ./session/ && \
	  $(GO) test -run '^$$' -bench 'CallOverhead' -benchtime 5000x -count 3 ./mcpbridge/ && \
	  $(GO) test -run '^$$' -bench 'CallToolCount' -benchtime 3000x -benchmem -count 3 ./mcpbridge/ && \
	  $(GO) test -run '^$$' -bench 'Startup|BigResult|Legacy' -benchtime 3x ./mcpbridge/ && \
	  SWITCHBOARD_BENCH=1 $(GO) test -count=1 -run TestBenchRatios -v ./host/ && \
	  bash cmd/sbbench/run.sh; \
	} 2>&1 | tee bench.out

# Every benchmark once, so none of them rots between measurements (part of test-go's budget).
test-bench-smoke:
	$(GO) test -run '^$$' -bench . -benchtime 1x $(PKGS)

clean:
	rm -rf $(BIN)
