package mcpbridge

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// toolPrefix starts every registered MCP tool name.
const toolPrefix = "mcp__"

// MaxToolNameLen is the longest registered tool name (the limit of the OpenAI and Anthropic tool APIs).
const MaxToolNameLen = 64

// hashLen is the number of hex digits of the short hash appended to names made safe.
const hashLen = 8

// ToolName returns mcp__<server>__<tool>. It does not make the name safe; the registry does
// (see [Registry.Tools] for the names actually registered).
func ToolName(server, tool string) string {
	return toolPrefix + server + "__" + tool
}

// ParseToolName splits mcp__<server>__<tool> at the first "__" after the prefix. Because a valid
// server name has no "__" and does not end in "_", that split is the only one: for every name
// the registry registers (names made safe included) it returns the tool's server. For names not
// made safe it returns the tool too; a made-safe name's original tool is found with
// [Registry.Lookup]. A name whose server part is not a valid server name, or whose tool part is
// empty or starts with '_', does not parse.
func ParseToolName(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, toolPrefix)
	if !found {
		return "", "", false
	}
	server, tool, found = strings.Cut(rest, "__")
	if !found || tool == "" || tool[0] == '_' || config.ValidServerName(server) != nil {
		return "", "", false // no registered name has a tool part starting with '_'
	}
	return server, tool, true
}

// RegisteredName is the name the registry gives tool of server when no other tool claims the
// same name: [ToolName] when that is safe, else the made-safe form. Exported for tests of the
// naming invariants in other packages.
func RegisteredName(server, tool string) string { return registeredName(server, tool) }

// safeChar reports whether c may appear in a registered tool name.
func safeChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// isSafeName reports whether name can be registered as is.
func isSafeName(name string) bool {
	if len(name) > MaxToolNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !safeChar(name[i]) {
			return false
		}
	}
	return true
}

// shortHash is the first hashLen hex digits of sha256(server NUL tool).
func shortHash(server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return hex.EncodeToString(sum[:])[:hashLen]
}

// hashedName is the safe form of a tool name: ToolName with every character outside
// [A-Za-z0-9_-] replaced by '_', cut so that "_" plus an 8-digit hash of (server, tool)
// fits in MaxToolNameLen. A tool part that would be empty or start with '_' starts with '-'
// instead. The hash keeps distinct (server, tool) pairs distinct. The server part is never cut:
// it ends by character 39, and the cut is at 55.
func hashedName(server, tool string) string {
	t := []byte(tool)
	for i, c := range t {
		if !safeChar(c) {
			t[i] = '_'
		}
	}
	switch {
	case len(t) == 0:
		t = []byte{'-'}
	case t[0] == '_':
		t[0] = '-' // the tool part never starts with '_' (see isSafeName)
	}
	b := []byte(toolPrefix + server + "__" + string(t))
	limit := MaxToolNameLen - 1 - hashLen
	if len(b) > limit {
		b = b[:limit]
	}
	return string(b) + "_" + shortHash(server, tool)
}

// registeredName is the name a tool is registered under when nothing collides with it. A tool
// whose name is empty or starts with '_' is made safe: no registered tool part starts with '_',
// so no allowlist entry can be read as "server x_, tool y" and "server x, tool _y" at once.
func registeredName(server, tool string) string {
	if n := ToolName(server, tool); tool != "" && tool[0] != '_' && isSafeName(n) {
		return n
	}
	return hashedName(server, tool)
}
