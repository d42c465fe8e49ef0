package mcpbridge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// Tool pinning (issue 13): a tool is pinned by a hash over a canonical form of everything the
// model and the person see of it (name, title, description, input and output schema,
// annotations) and of the server it comes from (its identity: command and args, or URL, as
// written: ${env:X} references, never their values, so no secret reaches the pin file). The
// registry computes the form once per tools/list (connect, reconnect, list_changed), never per
// call; the host compares it with the user's pins.

// pinFields are the canonical form's fields in the order the diff shows them.
var pinFields = []string{"server", "name", "title", "description", "inputSchema", "outputSchema", "annotations", "ui"}

// ServerIdentity is the server part of every tool's canonical form.
func ServerIdentity(cfg config.ServerConfig) json.RawMessage {
	v := struct {
		Transport string   `json:"transport"`
		Command   string   `json:"command,omitempty"`
		Args      []string `json:"args,omitempty"`
		URL       string   `json:"url,omitempty"`
	}{Transport: cfg.Transport}
	if cfg.Transport == config.TransportStdio || (cfg.Transport == "" && cfg.URL == "") {
		v.Command, v.Args = cfg.Command, cfg.Args
	} else {
		v.URL = cfg.URL
	}
	b, _ := json.Marshal(v) // ignore error: plain types
	return b
}

// CanonicalTool returns the canonical form of one tool of a server with identity server, and its
// hash (sha256, hex). JSON values are re-encoded with sorted keys and without white space, so the
// same definition sent twice in another layout hashes the same.
func CanonicalTool(server json.RawMessage, name, title, description string, input, output, annotations json.RawMessage) (json.RawMessage, string) {
	return canonicalTool(server, name, title, description, input, output, annotations, nil)
}

// canonicalTool is CanonicalTool with the tool's MCP Apps declaration (apps.go; nil: none, and
// the form is as before views existed, so no existing pin changes).
func canonicalTool(server json.RawMessage, name, title, description string, input, output, annotations json.RawMessage, ui *ToolUI) (json.RawMessage, string) {
	m := map[string]any{"server": canonicalValue(server), "name": name, "description": description}
	if v := canonicalUI(ui); v != nil {
		m["ui"] = v
	}
	if title != "" {
		m["title"] = title
	}
	if v := canonicalValue(input); v != nil {
		m["inputSchema"] = v
	}
	if v := canonicalValue(output); v != nil {
		m["outputSchema"] = v
	}
	if v := canonicalValue(annotations); v != nil {
		m["annotations"] = v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(m) // ignore error: decoded JSON values always encode
	form := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	sum := sha256.Sum256(form)
	return form, hex.EncodeToString(sum[:])
}

// canonicalValue decodes raw keeping numbers exact; nil for absent, null or invalid JSON (an
// invalid value is kept as its text so a change of it still changes the hash).
func canonicalValue(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "invalid JSON: " + string(raw)
	}
	return v
}

// pinTools fills the canonical form and hash of each tool of a server.
func pinTools(cfg config.ServerConfig, tools []wireTool) []wireTool {
	id := ServerIdentity(cfg)
	for i := range tools {
		t := &tools[i]
		t.canonical, t.hash = canonicalTool(id, t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations, t.ui)
	}
	return tools
}

// maxDiffLines bounds each side of one field's line diff (a bigger field is shown whole, removed
// then added).
const maxDiffLines = 400

// DiffDefinitions says what changed between two canonical forms (CanonicalTool), field by field:
// each changed field's name, then its lines, "- " for the old, "+ " for the new and "  " for
// those both share. old nil is a new tool, cur nil a removed one. The text is as the server sent
// it: escape it before showing it to a person.
func DiffDefinitions(old, cur json.RawMessage) string {
	o, c := fieldsOf(old), fieldsOf(cur)
	var b strings.Builder
	for _, f := range pinFields {
		ol, cl := fieldLines(o[f]), fieldLines(c[f])
		if slicesEqual(ol, cl) {
			continue
		}
		fmt.Fprintf(&b, "%s:\n", f)
		for _, l := range lineDiff(ol, cl) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// PrettyDefinition is a canonical form as indented JSON, for a diff editor.
func PrettyDefinition(form json.RawMessage) string {
	if len(form) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, form, "", "  ") != nil {
		return string(form)
	}
	return b.String() + "\n"
}

func fieldsOf(form json.RawMessage) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(form) > 0 {
		json.Unmarshal(form, &m) // ignore error: a broken form shows as all fields absent
	}
	return m
}

// fieldLines is a field's value as lines: a string's own lines, other JSON indented.
func fieldLines(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.Split(s, "\n")
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return []string{string(raw)}
	}
	return strings.Split(b.String(), "\n")
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lineDiff is a longest-common-subsequence line diff.
func lineDiff(a, b []string) []string {
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		out := make([]string, 0, len(a)+len(b))
		for _, l := range a {
			out = append(out, "- "+l)
		}
		for _, l := range b {
			out = append(out, "+ "+l)
		}
		return out
	}
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, "  "+a[i])
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, "- "+a[i])
	}
	for ; j < m; j++ {
		out = append(out, "+ "+b[j])
	}
	return out
}
