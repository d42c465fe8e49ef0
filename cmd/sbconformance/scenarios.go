package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// A scenario handler does what the scenario's server expects of a client: what an agent's turn
// or the editor would do with it (connect, list, call, read).
type scenarioFunc func(ctx context.Context, e *env) error

var scenarios = map[string]scenarioFunc{
	"initialize":                          connectOnly,
	"tools_call":                          callFirstTool(map[string]any{"a": 2, "b": 3}),
	"elicitation-sep1034-client-defaults": callTool("test_client_elicitation_defaults", map[string]any{}),
	"sse-retry":                           callFirstTool(map[string]any{}),
	"json-schema-2020-12-preservation":    echoSchema,
	"json-schema-ref-no-deref":            connectOnly,
	"request-metadata":                    connectOnly,
	"sep-2322-client-request-state":       callEach("test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"),
	"http-standard-headers":               exerciseAll,
	"http-custom-headers":                 exerciseAll,
	"http-invalid-tool-headers":           exerciseAll,
}

// authScenarios sign in (when the server asks), then list the tools and call test-tool.
var authScenarios = []string{
	"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
	"auth/basic-cimd", "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
	"auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
	"auth/pre-registration", "auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
	"auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
	"auth/authorization-server-migration", "auth/iss-supported", "auth/iss-not-advertised",
	"auth/iss-supported-missing", "auth/iss-wrong-issuer", "auth/iss-unexpected", "auth/iss-normalized",
	"auth/metadata-issuer-mismatch",
}

func init() {
	for _, s := range authScenarios {
		scenarios[s] = callTool("test-tool", map[string]any{})
	}
}

func handlerFor(scenario string) (scenarioFunc, bool) {
	h, ok := scenarios[scenario]
	return h, ok
}

func connectOnly(ctx context.Context, e *env) error { return e.connect(ctx) }

func callTool(name string, args any) scenarioFunc {
	return func(ctx context.Context, e *env) error {
		if err := e.connect(ctx); err != nil {
			return err
		}
		return resultErr(e.call(ctx, name, args))
	}
}

// callFirstTool calls the server's first tool (by name), as the suite's own client does.
func callFirstTool(args any) scenarioFunc {
	return func(ctx context.Context, e *env) error {
		if err := e.connect(ctx); err != nil {
			return err
		}
		names := toolNames(e)
		if len(names) == 0 {
			return errors.New("the server lists no tools")
		}
		return resultErr(e.call(ctx, names[0], args))
	}
}

// callEach calls the named tools in order, with no arguments.
func callEach(names ...string) scenarioFunc {
	return func(ctx context.Context, e *env) error {
		if err := e.connect(ctx); err != nil {
			return err
		}
		var errs []error
		for _, n := range names {
			if err := resultErr(e.call(ctx, n, map[string]any{})); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", n, err))
			}
		}
		return errors.Join(errs...)
	}
}

// echoSchema hands json_schema_2020_12_tool's inputSchema, as the registry gives it to the
// model, back to the server through json_schema_echo: any keyword lost on the way shows.
func echoSchema(ctx context.Context, e *env) error {
	if err := e.connect(ctx); err != nil {
		return err
	}
	t, ok := e.tools()["json_schema_2020_12_tool"]
	if !ok {
		return errors.New("the server has no json_schema_2020_12_tool")
	}
	return resultErr(e.call(ctx, "json_schema_echo", map[string]any{"schema": t.InputSchema}))
}

// exerciseAll uses everything the server offers: every tool (arguments from the schema's
// defaults and examples, or the calls the scenario's context names, as a model would make them),
// every resource read, every prompt got.
func exerciseAll(ctx context.Context, e *env) error {
	if err := e.connect(ctx); err != nil {
		return err
	}
	var errs []error
	calls, err := e.toolCalls()
	if err != nil {
		return err
	}
	if calls == nil {
		for _, n := range toolNames(e) {
			calls = append(calls, toolCall{n, sampleArgs(e.tools()[n].InputSchema)})
		}
	}
	for _, c := range calls {
		if err := resultErr(e.call(ctx, c.Name, c.Arguments)); err != nil {
			errs = append(errs, fmt.Errorf("tool %s: %w", c.Name, err))
		}
	}
	rs, _, err := e.reg.Resources(ctx, server)
	if err != nil {
		errs = append(errs, err)
	}
	for _, r := range rs {
		if _, err := e.reg.ReadResource(ctx, server, r.URI); err != nil {
			errs = append(errs, fmt.Errorf("resource %s: %w", r.URI, err))
		}
	}
	ps, err := e.reg.Prompts(ctx, server)
	if err != nil {
		errs = append(errs, err)
	}
	for _, p := range ps {
		if _, err := e.reg.GetPrompt(ctx, server, p.Name, nil); err != nil {
			errs = append(errs, fmt.Errorf("prompt %s: %w", p.Name, err))
		}
	}
	return errors.Join(errs...)
}

func toolNames(e *env) []string {
	var names []string
	for n := range e.tools() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// sampleArgs are arguments a model could send: each property's default, else its first
// example or enum value, else a value of its type.
func sampleArgs(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type     any   `json:"type"`
			Default  any   `json:"default"`
			Examples []any `json:"examples"`
			Enum     []any `json:"enum"`
		} `json:"properties"`
	}
	args := map[string]any{}
	if json.Unmarshal(schema, &s) != nil {
		return args
	}
	for name, p := range s.Properties {
		switch {
		case p.Default != nil:
			args[name] = p.Default
		case len(p.Examples) > 0:
			args[name] = p.Examples[0]
		case len(p.Enum) > 0:
			args[name] = p.Enum[0]
		default:
			t, _ := p.Type.(string)
			switch t {
			case "number", "integer":
				args[name] = 1
			case "boolean":
				args[name] = true
			case "string":
				args[name] = "value"
			}
		}
	}
	return args
}

// resultErr turns an error result into an error, with the text the model would see.
func resultErr(res mcpbridge.Result, err error) error {
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("error result: %s", strings.TrimSpace(res.Text))
	}
	return nil
}

// toolCall is one call a scenario's context asks for ("toolCalls": [{name, arguments}]).
type toolCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// toolCalls are the context's toolCalls, nil when it names none.
func (e *env) toolCalls() ([]toolCall, error) {
	raw, ok := e.context["toolCalls"]
	if !ok {
		return nil, nil
	}
	var calls []toolCall
	if err := json.Unmarshal(raw, &calls); err != nil {
		return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT toolCalls: %w", err)
	}
	return calls, nil
}
