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

.PHONY: test-keyring-deps test-browser-deps
.PHONY: build demo test test-crossvet test-go test-bench-smoke test-fuzz test-conformance test-nvim test-vscode test-vscode-e2e package-vscode package-vscode-all bench clean

# The binary as it ships (static, and without mcp-go's in-process transport: see build.sh).
build:
	GO=$(GO) bash cmd/switchboard/build.sh $(BIN)/switchboard
	$(GO) build -o $(BIN)/mcptest ./cmd/mcptest

# The main job: connect the demo MCP servers (real subprocesses, one of them broken on purpose),
# print every server's state and tools, then make one tool call through the confirm gate (it asks
# on the terminal; without one it is denied, which is the gate's answer too). It fails loudly if
# the HTTP server does not come up or any server but 'flaky' fails.
DEMO_PORT ?= 8765
demo: build
	@set -u; tmp=$$(mktemp -d); trap 'kill $$web 2>/dev/null; rm -rf "$$tmp"' EXIT; \
	  export SWITCHBOARD_DEMO_BIN=$(BIN) XDG_CONFIG_HOME=$$tmp/config XDG_STATE_HOME=$$tmp/state; \
	  $(BIN)/mcptest --name web --http 127.0.0.1:$(DEMO_PORT) 2>$$tmp/web.log & web=$$!; \
	  for i in $$(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$(DEMO_PORT)) 2>/dev/null && break; \
	    kill -0 $$web 2>/dev/null || break; sleep 0.1; done; \
	  if ! kill -0 $$web 2>/dev/null || ! (exec 3<>/dev/tcp/127.0.0.1/$(DEMO_PORT)) 2>/dev/null; then \
	    echo "make demo: FAILED: the demo HTTP server did not start on 127.0.0.1:$(DEMO_PORT) (is the port taken? try make demo DEMO_PORT=8766)"; \
	    cat $$tmp/web.log; exit 1; fi; \
	  sed "s/8765/$(DEMO_PORT)/" cmd/mcptest/demo.json > $$tmp/demo.json; \
	  echo "== switchboard check: every configured MCP server, its state and tools"; \
	  $(BIN)/switchboard check --config $$tmp/demo.json | tee $$tmp/check.out; \
	  failed=$$(grep -E '^[^ ]+  (FAILED|STARTING|UNTRUSTED)  ' $$tmp/check.out | cut -d' ' -f1 | tr '\n' ' '); \
	  if [ "$$failed" != "flaky " ]; then \
	    echo; echo "make demo: FAILED: expected only 'flaky' to fail, got: $${failed:-none}"; exit 1; fi; \
	  echo; echo "(the server 'flaky' exits at start on purpose: a failure is reported, never fatal)"; \
	  echo; echo "== switchboard call: one tool call through the confirm gate"; \
	  { $(BIN)/switchboard call mcp__demo__echo '{"text":"hello through the confirm gate"}' --config $$tmp/demo.json \
	    2>&1 1>&3 3>&- | tee $$tmp/call.err >&2; } 3>$$tmp/call.out; rc=$${PIPESTATUS[0]}; cat $$tmp/call.out; \
	  if ! grep -q 'hello through the confirm gate' $$tmp/call.out && ! grep -q 'mcp__demo__echo was denied\|You denied mcp__demo__echo' $$tmp/call.err; then \
	    echo "make demo: FAILED: the call neither ran nor was denied at the gate (exit $$rc)"; exit 1; fi; \
	  echo; echo "make demo: OK. Next, try (it asks you before the tool runs):"; \
	  echo "  SWITCHBOARD_DEMO_BIN=$(BIN) ./bin/switchboard call mcp__demo__echo '{\"text\":\"hi\"}' --config cmd/mcptest/demo.json"

# Everything CI runs. Each editor tier installs what it needs itself (apt, npm).
test: test-crossvet test-go test-bench-smoke test-fuzz test-conformance test-nvim test-vscode test-vscode-e2e

# The program builds, and every package's tests compile and pass vet, for macOS and Windows too
# (vet type-checks the test files): a Linux-only call in a file built everywhere breaks `go test`
# on a contributor's Mac, and is caught here first. CGO_ENABLED=0 as the shipped binaries are
# built. Each system lists its own packages (a package may have no files for one). Measured
# 25-36 s with a warm build cache on 2 busy shared cores (load 8-10), most of it linking the
# commands (vet's results are cached: 2 s a system).
test-crossvet:
	@set -e; for os in darwin windows; do \
	  echo "go vet and go build for $$os"; \
	  pkgs=$$(GOOS=$$os $(GO) list ./... | grep -v /node_modules/); \
	  CGO_ENABLED=0 GOOS=$$os $(GO) vet $$pkgs; \
	  CGO_ENABLED=0 GOOS=$$os $(GO) build $$pkgs; \
	done

test-go: test-keyring-deps test-browser-deps
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# The OAuth token store's keychain test runs a real Secret Service (gnome-keyring in its own D-Bus
# session): install it the way the editor tiers install theirs.
test-keyring-deps:
	@command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dbus gnome-keyring >/dev/null; }

# The MCP Apps views are checked in a real browser from the Go tier (the browser path) and the node
# tier (the VS Code webview): Debian's chromium, which the e2e tier installs too.
test-browser-deps:
	@command -v chromium >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

# Short runs of every fuzz target; their corpora live under testdata/fuzz.
test-fuzz:
	@set -e; for pkg in $(PKGS); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg; \
	  done; \
	done

# The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# cmd/sbconformance/package-lock.json) runs cmd/sbconformance, a client on the real registry, gate
# and sign-in, through every client scenario of both eras; expected failures, each with its
# reason, are in cmd/sbconformance/expected-failures.txt. One era: bash cmd/sbconformance/run.sh --era 2026-07-28
test-conformance:
	bash cmd/sbconformance/run.sh

test-nvim:
	bash editors/nvim/tests/run-all.sh

test-vscode: test-browser-deps
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
	  SWITCHBOARD_BENCH=1 $(GO) test -count=1 -run TestBenchRatios -v ./host/lsp/ && \
	  bash cmd/sbbench/run.sh; \
	} 2>&1 | tee bench.out

# Every benchmark once, so none of them rots between measurements (part of test-go's budget).
test-bench-smoke:
	$(GO) test -run '^$$' -bench . -benchtime 1x $(PKGS)

clean:
	rm -rf $(BIN)
