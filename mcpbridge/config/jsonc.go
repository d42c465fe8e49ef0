package config

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// standardizeJSONC turns JSON with comments and trailing commas (JSONC, what VS Code writes into
// .vscode/mcp.json and Zed into settings.json) into plain JSON. Comments become spaces and
// trailing commas a space, so every byte keeps its offset: line:col of later errors stay right.
// Plain JSON comes back unchanged. The error says line:col of the offending byte.
func standardizeJSONC(data []byte) ([]byte, error) {
	v, err := hujson.Parse(bytes.Clone(data)) // Standardize writes into the parsed buffer
	if err != nil {
		return nil, jsoncError(err)
	}
	v.Standardize()
	return v.Pack(), nil
}

// jsoncError turns hujson's "hujson: line L, column C: msg" into "L:C: invalid JSON: msg", the
// form [jsonErrorAt] uses.
func jsoncError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "hujson: ")
	var line, col int
	if n, _ := fmt.Sscanf(msg, "line %d, column %d:", &line, &col); n == 2 {
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			return fmt.Errorf("%d:%d: invalid JSON: %s", line, col, rest)
		}
	}
	return fmt.Errorf("invalid JSON: %s", msg)
}
