package policy

import (
	"errors"
	"fmt"
	"strings"
)

// maxServerNameLen mirrors mcpbridge.MaxServerNameLen, which this leaf may not import.
const maxServerNameLen = 32

// validServerName mirrors permissions.ValidServerName: ^[A-Za-z0-9][A-Za-z0-9_-]*$, at most 32
// characters, no "__", no trailing '_', so a rule names exactly one server.
func validServerName(name string) error {
	if name == "" {
		return errors.New("empty server name")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isNameChar(c) || (i == 0 && (c == '_' || c == '-')) {
			return fmt.Errorf("server name %q must start with a letter or digit and contain only letters, digits, '_' and '-'", name)
		}
	}
	switch {
	case len(name) > maxServerNameLen:
		return fmt.Errorf("server name %q is longer than %d characters", name, maxServerNameLen)
	case strings.Contains(name, "__"):
		return fmt.Errorf("server name %q must not contain \"__\"", name)
	case name[len(name)-1] == '_':
		return fmt.Errorf("server name %q must not end in '_'", name)
	}
	return nil
}

func isNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// parseToolRule parses a permission rule in Claude Code's MCP form: mcp__<server> or
// mcp__<server>__* (every tool of the server), mcp__<server>__<prefix>* (the tools whose names
// start with prefix), mcp__<server>__<tool>, or a Switchboard built-in tool name. ok is false,
// with no error, for a Claude Code rule about its own tools (Bash(...), Read(...)): they are
// reported and ignored. A "*" that could span servers (mcp__*, mcp__gith*) is an error, as in
// the allowlist.
func parseToolRule(s string) (tr toolRule, ok bool, err error) {
	tr.pattern = s
	if strings.ContainsAny(s, "()") && !strings.HasPrefix(s, "mcp__") {
		return tr, false, nil
	}
	name, star := strings.CutSuffix(s, "*")
	for i := 0; i < len(name); i++ {
		if !isNameChar(name[i]) {
			return tr, false, fmt.Errorf("rule %q: invalid character %q (a rule is mcp__<server>, mcp__<server>__*, mcp__<server>__<tool>[*] or a built-in tool name)", s, rune(name[i]))
		}
	}
	if s == "mcp__*" {
		tr.server, tr.prefix = "*", true // every MCP tool; only deny and ask take it (parse.go)
		return tr, true, nil
	}
	rest, isMCP := strings.CutPrefix(name, "mcp__")
	if !isMCP {
		if star || name == "" {
			return tr, false, fmt.Errorf("rule %q: \"*\" must follow mcp__<server>__", s)
		}
		tr.tool = name
		return tr, true, nil
	}
	server, tool, sep := strings.Cut(rest, "__")
	if err := validServerName(server); err != nil {
		return tr, false, fmt.Errorf("rule %q: %v", s, err)
	}
	tr.server = server
	switch {
	case !sep && star:
		return tr, false, fmt.Errorf("rule %q: \"*\" must follow mcp__<server>__ (it cannot span servers)", s)
	case !sep:
		tr.prefix = true // mcp__<server>: the whole server
	case tool == "" && !star:
		return tr, false, fmt.Errorf("rule %q has no tool after mcp__%s__ (mcp__%s__* is the whole server)", s, server, server)
	case strings.HasPrefix(tool, "_"):
		return tr, false, fmt.Errorf("rule %q: the tool part must not start with '_'", s)
	default:
		tr.tool, tr.prefix = tool, star
	}
	return tr, true, nil
}

// matches reports whether tr covers the tool part of a tool of its server (the server was
// compared by the caller).
func (tr toolRule) matches(tool string) bool {
	if tr.prefix {
		return strings.HasPrefix(tool, tr.tool)
	}
	return tool == tr.tool
}

// cutToolName splits mcp__<server>__<tool> at the first "__" after "mcp__".
func cutToolName(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	return server, tool, ok && tool != ""
}
