package mcpbridge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// loadsCode are env keys that make a runtime (node, the dynamic linker, python, perl, ruby, a
// shell, the JVM, git) load or run code named in their value. A trust prompt shows them apart.
var loadsCode = []string{
	"NODE_OPTIONS", "NODE_PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONSTARTUP",
	"PYTHONHOME", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "BASH_ENV", "ENV",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "GIT_SSH_COMMAND", "GIT_SSH",
	"GIT_EXEC_PATH", "GIT_ASKPASS", "SSH_ASKPASS", "PROMPT_COMMAND", "ZDOTDIR", "NPM_CONFIG_NODE_OPTIONS",
}

// LoadsCode reports whether env key k makes a runtime load code named in its value.
func LoadsCode(k string) bool {
	return slices.Contains(loadsCode, k) || strings.HasPrefix(k, "DYLD_") || strings.HasPrefix(k, "npm_config_")
}

// TrustSentences describes a workspace definition for the trust prompt, one sentence each,
// essentials first: where it comes from, what changed since the user trusted prev (nil = never
// trusted one), what runs, what it reads from the user's environment and where that goes, env
// keys that load code (with their values as written), then every other env key and header name.
// Values from the user's environment never appear, only the variable names. The text is raw:
// callers escape it for where it goes.
func TrustSentences(c ServerConfig, prev *ServerConfig) []string {
	var out []string
	out = append(out, fmt.Sprintf("Workspace file %s defines MCP server '%s'.", c.Source, c.Name))
	if prev != nil {
		if ch := DefinitionChanges(*prev, c); len(ch) > 0 {
			out = append(out, "Changed since you trusted it: "+strings.Join(ch, "; ")+".")
		}
	}
	if c.Transport == TransportStdio {
		run := "It runs " + c.Summary()
		if c.Cwd != "" {
			run += " in " + c.Cwd
		}
		out = append(out, run+".")
	} else {
		out = append(out, fmt.Sprintf("It connects to %s (%s).", c.URL, c.Transport))
	}
	if refs := c.EnvRefs(); len(refs) > 0 {
		parts := make([]string, len(refs))
		for i, r := range refs {
			parts[i] = r.Var + " into " + r.Where
		}
		out = append(out, "It reads from your environment: "+strings.Join(parts, ", ")+".")
	} else {
		out = append(out, "It reads nothing from your environment.")
	}
	var plain []string
	for _, k := range sortedKeys(c.Env) {
		if LoadsCode(k) {
			out = append(out, fmt.Sprintf("Env %s=%s makes the program load code.", k, c.Env[k]))
		} else {
			plain = append(plain, k)
		}
	}
	if len(plain) > 0 {
		out = append(out, "It sets env "+strings.Join(plain, ", ")+".")
	}
	if c.EnvFile != "" { // vars.go
		out = append(out, fmt.Sprintf("It sets env %s from file %s.", strings.Join(c.EnvFileKeys, ", "), c.EnvFile))
		for _, k := range c.EnvFileKeys {
			if LoadsCode(k) {
				out = append(out, fmt.Sprintf("Env %s from file %s makes the program load code.", k, c.EnvFile))
			}
		}
	}
	if len(c.Headers) > 0 {
		out = append(out, "It sends headers "+strings.Join(sortedKeys(c.Headers), ", ")+".")
	}
	return out
}

// DefinitionChanges lists what differs from prev to cur in what a fingerprint covers, as short
// phrases ("env NODE_OPTIONS added", "arguments changed (were: -y a)"). Values are shown as
// written (templates), never resolved.
func DefinitionChanges(prev, cur ServerConfig) []string {
	var out []string
	if prev.Transport != cur.Transport {
		out = append(out, fmt.Sprintf("type changed (was %s)", prev.Transport))
	}
	if prev.Command != cur.Command {
		out = append(out, fmt.Sprintf("command changed (was %s)", quoteArg(prev.Command)))
	}
	if !slices.Equal(prev.Args, cur.Args) {
		was := make([]string, len(prev.Args))
		for i, a := range prev.Args {
			was[i] = quoteArg(a)
		}
		out = append(out, fmt.Sprintf("arguments changed (were: %s)", strings.Join(was, " ")))
	}
	if prev.Cwd != cur.Cwd {
		out = append(out, fmt.Sprintf("cwd changed (was %s)", prev.Cwd))
	}
	if prev.URL != cur.URL {
		out = append(out, fmt.Sprintf("url changed (was %s)", prev.URL))
	}
	out = append(out, mapChanges("env", prev.Env, cur.Env)...)
	out = append(out, mapChanges("header", prev.Headers, cur.Headers)...)
	if prev.EnvFile != cur.EnvFile {
		out = append(out, fmt.Sprintf("envFile changed (was %s)", prev.EnvFile))
	}
	return out
}

func mapChanges(what string, prev, cur map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(cur) {
		if old, ok := prev[k]; !ok {
			out = append(out, fmt.Sprintf("%s %s added", what, k))
		} else if old != cur[k] {
			out = append(out, fmt.Sprintf("%s %s changed", what, k))
		}
	}
	for _, k := range sortedKeys(prev) {
		if _, ok := cur[k]; !ok {
			out = append(out, fmt.Sprintf("%s %s removed", what, k))
		}
	}
	return out
}

// Definition is what a fingerprint covers, as JSON: kept with a trust decision so that a later
// prompt can say what changed (see ParseDefinition).
func (c ServerConfig) Definition() json.RawMessage {
	b, _ := json.Marshal(fingerprintView{c.Name, c.Transport, c.Command, c.Args, c.Env, c.Cwd, c.URL, c.Headers, c.EnvFile, ""}) // ignore error: plain types
	return b
}

// ParseDefinition reads what Definition wrote.
func ParseDefinition(raw json.RawMessage) (ServerConfig, error) {
	var v fingerprintView
	if err := json.Unmarshal(raw, &v); err != nil {
		return ServerConfig{}, fmt.Errorf("mcpbridge: parse definition: %w", err)
	}
	return ServerConfig{Name: v.Name, Transport: v.Transport, Command: v.Command, Args: v.Args, Env: v.Env,
		Cwd: v.Cwd, URL: v.URL, Headers: v.Headers, EnvFile: v.EnvFile}, nil
}
