package config

import (
	"encoding/json"
	"fmt"
	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// loadsCode are env keys (upper case) that make a program load, run or find code named in their
// value: where programs and their libraries are looked up (PATH, HOME and its Windows cousins,
// which hold rc and config files; XDG_CACHE_HOME, where uv keeps the tool environments uvx
// runs), and the dynamic linker, shell, glibc, JVM, git, ssh and language runtime switches. A trust prompt shows them first. loadsCodePrefixes adds families.
var loadsCode = []string{
	"PATH", "PATHEXT", "HOME", "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS", "XDG_CACHE_HOME", "COMSPEC", "SHELL",
	"BASH_ENV", "ENV", "PROMPT_COMMAND", "ZDOTDIR", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES",
	"_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "SSH_ASKPASS", "SSH_AUTH_SOCK", "EDITOR", "VISUAL", "PAGER",
	"LUA_PATH", "LUA_CPATH", "PHPRC", "PHP_INI_SCAN_DIR", "TCLLIBPATH", "R_PROFILE", "R_PROFILE_USER",
	"GOFLAGS", "GOPATH", "GOROOT", "GOTOOLCHAIN", "GOPROXY", "CC", "CXX",
}

// loadsCodePrefixes are the families of such keys (upper case).
var loadsCodePrefixes = []string{
	"LD_", "DYLD_", "NODE_", "PYTHON", "PERL", "RUBY", "JAVA_", "NPM_CONFIG_", "GIT_",
	"GEM_", "BUNDLE_", "PIP_", "UV_", "CARGO_", "RUSTC_", "DENO_", "BUN_", "YARN_", "PNPM_", "COREPACK_",
}

// LoadsCode reports whether env key k makes a program load or find code named in its value. Keys
// are matched without regard to case: Windows does not distinguish them, and a program may read
// either spelling.
func LoadsCode(k string) bool {
	u := strings.ToUpper(k)
	if slices.Contains(loadsCode, u) {
		return true
	}
	for _, p := range loadsCodePrefixes {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// Bounds of what a trust prompt shows of one env or header value and one key, of the command line
// or URL, and of a path, in characters. Each part is bounded on its own, so that no long part (a
// URL of 4,000 characters) pushes what the server reads from the environment and where it sends
// it out of a question that is cut as a whole.
const (
	trustValueLimit   = 200
	trustKeyLimit     = 100
	trustRunLimit     = 1000
	trustPathLimit    = 500
	trustChangesLimit = 800
)

// TrustSentences describes a workspace definition for the trust prompt, one sentence each,
// essentials first: where it comes from, what runs or where it connects, what it reads from the
// user's environment and where that goes, env keys that load or find code, a command found via a
// PATH the file sets; then its sandbox, what changed since the user trusted prev (nil = never
// trusted one), the env file, the OAuth client secret, every header, every other env key, and the
// tool filters. Values written in the file are the repository's and are shown as written
// (templates stay templates, escaped and bounded); values from the user's environment never
// appear, only the variable names. The rest of the text is raw: callers escape it for where it
// goes (TrustQuestion does).
func TrustSentences(c ServerConfig, prev *ServerConfig) []string {
	out, _ := trustSentences(c, prev)
	return out
}

// TrustQuestion is the trust question's text (TrustSentences as one paragraph, escaped for a
// line) within about limit characters. Its first sentences are never cut, however long: where the
// definition comes from, what it runs or connects to (bounded on its own), every variable it reads
// from the user's environment and where each goes, the env settings that load code, a command
// found via a PATH the file sets. What follows is cut to the room left (at least 500 characters),
// so that no long part, a changed-since list, a URL, a thousand arguments, pushes those out.
func TrustQuestion(c ServerConfig, prev *ServerConfig, limit int) string {
	out, essential := trustSentences(c, prev)
	head := safetext.Line(strings.Join(out[:essential], " "))
	rest := strings.Join(out[essential:], " ")
	if rest == "" {
		return head
	}
	return head + " " + safetext.Bounded(rest, max(limit-len(head)-1, 500))
}

// trustSentences is TrustSentences, and how many of its first sentences TrustQuestion never cuts.
func trustSentences(c ServerConfig, prev *ServerConfig) (out []string, essential int) {
	path := func(p string) string { return safetext.Bounded(p, trustPathLimit) }
	if c.FromFolder != "" {
		out = append(out, fmt.Sprintf("Your configuration (%s) defines MCP server '%s' with ${workspaceFolder}, which is the open folder %s: what it runs comes from that folder.",
			path(c.Source), c.Name, path(c.FromFolder)))
	} else {
		out = append(out, fmt.Sprintf("Workspace file %s defines MCP server '%s'.", path(c.Source), c.Name))
	}
	if c.Transport == TransportStdio {
		run := "It runs " + safetext.Bounded(c.Summary(), trustRunLimit)
		if c.Cwd != "" {
			run += " in " + path(c.Cwd)
		} else if c.Folder != "" && c.Registry == nil {
			run += " in " + path(c.Folder) // mcpbridge.RunDir
		}
		out = append(out, run+".")
	} else {
		out = append(out, fmt.Sprintf("It connects to %s (%s).", safetext.Bounded(c.URL, trustRunLimit), c.Transport))
	}
	if refs := c.EnvRefs(); len(refs) > 0 {
		parts := make([]string, 0, len(refs))
		seen := map[string]bool{}
		for _, r := range refs {
			p := shownKey(r.Var) + " into " + safetext.Bounded(r.Where, trustKeyLimit+10)
			if !seen[p] {
				seen[p] = true
				parts = append(parts, p)
			}
		}
		out = append(out, "It reads from your environment: "+strings.Join(parts, ", ")+".")
	} else {
		out = append(out, "It reads nothing from your environment.")
	}
	var code, plain []string
	for _, k := range sortedKeys(c.Env) {
		kv := shownKey(k) + "=" + shownValue(c.Env[k])
		if LoadsCode(k) {
			code = append(code, kv)
		} else {
			plain = append(plain, kv)
		}
	}
	if len(code) > 0 {
		out = append(out, "These env settings make the program load code or find programs: "+strings.Join(code, ", ")+".")
	}
	if c.EnvFile != "" { // vars.go: its keys that load code, each in full (bounded), with the essentials
		for _, k := range c.EnvFileKeys {
			if LoadsCode(k) {
				out = append(out, fmt.Sprintf("Env %s from file %s makes the program load code.", shownKey(k), path(c.EnvFile)))
			}
		}
	}
	if c.Transport == TransportStdio && bareCommand(c.Command) && setsPath(c.Env) {
		out = append(out, fmt.Sprintf("It runs `%s` found via the PATH this file sets, and so is every program it starts by name.",
			safetext.Bounded(c.Command, trustKeyLimit)))
	}
	essential = len(out)
	if c.Transport == TransportStdio && c.Sandbox != nil {
		out = append(out, "It runs "+c.Sandbox.Describe()+".")
	}
	if prev != nil {
		if ch := DefinitionChanges(*prev, c); len(ch) > 0 {
			out = append(out, safetext.Bounded("Changed since you trusted it: "+strings.Join(ch, "; "), trustChangesLimit)+".")
		}
	}
	if in := c.InputSentence(); in != "" { // inputs.go
		out = append(out, in)
	}
	if c.EnvFile != "" { // vars.go
		out = append(out, fmt.Sprintf("It sets env %s from file %s.", shownList(c.EnvFileKeys), path(c.EnvFile)))
	}
	if o := c.OAuth; o != nil && o.ClientSecret != "" {
		out = append(out, fmt.Sprintf("It signs in as client %s with a client secret, sent only to the authorization server %s.",
			safetext.Bounded(o.ClientID, trustKeyLimit), safetext.Bounded(o.Issuer, trustKeyLimit)))
	}
	if len(c.Headers) > 0 {
		hs := make([]string, 0, len(c.Headers))
		for _, k := range sortedKeys(c.Headers) {
			hs = append(hs, shownKey(k)+": "+shownValue(c.Headers[k]))
		}
		out = append(out, "It sends headers "+strings.Join(hs, ", ")+".")
	}
	if len(plain) > 0 { // last but for the filters: any number of them, none a secret of the user's
		out = append(out, "It sets env "+strings.Join(plain, ", ")+".")
	}
	if len(c.EnabledTools) > 0 {
		out = append(out, "It offers only the tools "+shownList(c.EnabledTools)+".")
	}
	if len(c.DisabledTools) > 0 {
		out = append(out, "It hides the tools "+shownList(c.DisabledTools)+".")
	}
	if c.Disabled {
		out = append(out, "It is disabled.")
	}
	return out, essential
}

func shownKey(k string) string   { return safetext.Bounded(k, trustKeyLimit) }
func shownValue(v string) string { return safetext.Bounded(v, trustValueLimit) }

func shownList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = shownKey(n)
	}
	return strings.Join(out, ", ")
}

// bareCommand: cmd names a program without a directory, so it is looked up in a PATH.
func bareCommand(cmd string) bool {
	return cmd != "" && !strings.ContainsAny(cmd, `/\`) && !strings.HasPrefix(cmd, "${")
}

// setsPath: env sets PATH, in any case.
func setsPath(env map[string]string) bool {
	for k := range env {
		if strings.EqualFold(k, "PATH") {
			return true
		}
	}
	return false
}

// DefinitionChanges lists what differs from prev to cur in what a fingerprint covers, as short
// phrases ("env NODE_OPTIONS added", "arguments changed (were: -y a)"). Values are shown as
// written (templates), never resolved.
func DefinitionChanges(prev, cur ServerConfig) []string {
	var out []string
	switch {
	case prev.Folder == cur.Folder:
	case prev.Folder == "" && cur.Folder != "":
		out = append(out, "it was trusted before trust was bound to a folder")
	default:
		out = append(out, fmt.Sprintf("folder changed (you trusted the one in %s: this is another folder's file, and runs that folder's files)", prev.Folder))
	}
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
	if !slices.Equal(prev.EnabledTools, cur.EnabledTools) {
		out = append(out, fmt.Sprintf("enabledTools changed (was: %s)", shownList(prev.EnabledTools)))
	}
	if !slices.Equal(prev.DisabledTools, cur.DisabledTools) {
		out = append(out, fmt.Sprintf("disabledTools changed (was: %s)", shownList(prev.DisabledTools)))
	}
	if prev.Disabled != cur.Disabled {
		out = append(out, fmt.Sprintf("disabled changed (was %t)", prev.Disabled))
	}
	if prev.EnvFile != cur.EnvFile {
		out = append(out, fmt.Sprintf("envFile changed (was %s)", prev.EnvFile))
	}
	switch ps, cs := prev.Sandbox, cur.Sandbox; {
	case ps == nil && cs != nil:
		out = append(out, "sandbox added")
	case ps != nil && cs == nil:
		out = append(out, fmt.Sprintf("sandbox removed (was %s)", ps.Describe()))
	case ps != nil && ps.Canonical() != cs.Canonical():
		out = append(out, fmt.Sprintf("sandbox changed (was %s)", ps.Describe()))
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
	v := c.fingerprintView()
	v.EnvDigest = ""        // the definition names the file; its content is checked by the fingerprint
	b, _ := json.Marshal(v) // ignore error: plain types
	return b
}

// ParseDefinition reads what Definition wrote.
func ParseDefinition(raw json.RawMessage) (ServerConfig, error) {
	var v fingerprintView
	if err := json.Unmarshal(raw, &v); err != nil {
		return ServerConfig{}, fmt.Errorf("mcpbridge: parse definition: %w", err)
	}
	var sb *sandbox.Profile
	if v.Sandbox != "" {
		p, err := sandbox.Parse([]byte(v.Sandbox))
		if err != nil {
			return ServerConfig{}, fmt.Errorf("mcpbridge: parse definition: %w", err)
		}
		sb = p
	}
	return ServerConfig{Name: v.Name, Transport: v.Transport, Command: v.Command, Args: v.Args, Env: v.Env,
		Cwd: v.Cwd, URL: v.URL, Headers: v.Headers, EnabledTools: v.EnabledTools, DisabledTools: v.DisabledTools,
		Disabled: v.Disabled, EnvFile: v.EnvFile, Sandbox: sb, Folder: v.Folder}, nil
}
