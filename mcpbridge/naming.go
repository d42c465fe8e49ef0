package mcpbridge

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// toolPrefix starts every registered MCP tool name.
const toolPrefix = "mcp__"

// MaxToolNameLen is the longest registered tool name (the limit of the OpenAI and Anthropic tool APIs).
const MaxToolNameLen = 64

// hashLen is the number of hex digits of the short hash appended to names made safe.
const hashLen = 8

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// ValidServerName reports whether name may name a server: it matches
// ^[A-Za-z0-9][A-Za-z0-9_-]*$ and has no "__", so that mcp__<server>__<tool> decodes to one server.
func ValidServerName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("server name is empty")
	case !serverNameRE.MatchString(name):
		return fmt.Errorf("server name %q must match ^[A-Za-z0-9][A-Za-z0-9_-]*$", name)
	case strings.Contains(name, "__"):
		return fmt.Errorf("server name %q must not contain \"__\"", name)
	}
	return nil
}

// ToolName returns mcp__<server>__<tool>. It does not make the name safe; the registry does
// (see [Registry.Tools] for the names actually registered).
func ToolName(server, tool string) string {
	return toolPrefix + server + "__" + tool
}

// ParseToolName splits mcp__<server>__<tool> at the first "__" after the prefix. It is the pure
// inverse of [ToolName] for valid server names; names made safe by the registry are resolved with
// [Registry.Lookup] instead.
func ParseToolName(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, toolPrefix)
	if !found {
		return "", "", false
	}
	server, tool, found = strings.Cut(rest, "__")
	if !found || server == "" || tool == "" || ValidServerName(server) != nil {
		return "", "", false
	}
	return server, tool, true
}

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
// fits in MaxToolNameLen. The hash keeps distinct (server, tool) pairs distinct.
func hashedName(server, tool string) string {
	b := []byte(ToolName(server, tool))
	for i, c := range b {
		if !safeChar(c) {
			b[i] = '_'
		}
	}
	limit := MaxToolNameLen - 1 - hashLen
	if len(b) > limit {
		b = b[:limit]
	}
	return string(b) + "_" + shortHash(server, tool)
}

// registeredName is the name a tool is registered under when nothing collides with it.
func registeredName(server, tool string) string {
	if n := ToolName(server, tool); isSafeName(n) {
		return n
	}
	return hashedName(server, tool)
}
