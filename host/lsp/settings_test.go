package lsp

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/switchboard-dev/switchboard/host/wire"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/permissions"
)

var update = flag.Bool("update", false, "rewrite generated files (editors/vscode/package.json settings)")

var packageJSONPath = filepath.Join("..", "..", "editors", "vscode", "package.json")

const (
	markerStart = `"$generated-start": {},`
	markerEnd   = `"$generated-end": {}`
)

// TestPackageJSONSettings regenerates the VS Code settings that mirror initializationOptions (the
// block between the markers of editors/vscode/package.json) from InitOptions and settingDocs, as
// rust-analyzer's generate_package_json_config does (STYLE.md section 5). It fails when the file
// would change; -update rewrites it.
func TestPackageJSONSettings(t *testing.T) {
	old, err := os.ReadFile(packageJSONPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(old), "\n")
	start, end := -1, -1
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case markerStart:
			if start >= 0 {
				t.Fatalf("%s: two %s markers", packageJSONPath, markerStart)
			}
			start = i
		case markerEnd:
			if end >= 0 {
				t.Fatalf("%s: two %s markers", packageJSONPath, markerEnd)
			}
			end = i
		}
	}
	if start < 0 || end < start {
		t.Fatalf("%s: want one line %s, then one line %s (inside contributes.configuration.properties)", packageJSONPath, markerStart, markerEnd)
	}
	indent := lines[end][:len(lines[end])-len(strings.TrimLeft(lines[end], " \t"))]
	block, err := generateSettings(indent)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(lines[start+1:end], "")
	if got == block {
		return
	}
	updated := strings.Join(lines[:start+1], "") + block + strings.Join(lines[end:], "")
	if !json.Valid([]byte(updated)) {
		t.Fatalf("the regenerated %s is not valid JSON:\n%s", packageJSONPath, block)
	}
	if *update {
		if err := os.WriteFile(packageJSONPath, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: settings regenerated", packageJSONPath)
		return
	}
	t.Errorf("%s: the settings between the markers are not generated from wire.InitOptions and host/lsp/settings.go (-have +want):\n%s\n"+
		"Run `go test ./host/lsp -run TestPackageJSONSettings -update` and commit package.json.",
		packageJSONPath, cmp.Diff(strings.Split(got, "\n"), strings.Split(block, "\n")))
}

// TestSettingDocs checks that settingDocs documents exactly the fields of InitOptions, that the
// extension reads exactly these settings (editors/vscode/src/config.ts, hostSettings), and that
// the mode enum lists every permissions.Mode.
func TestSettingDocs(t *testing.T) {
	var fields, docs []string
	for f := range reflect.TypeFor[wire.InitOptions]().Fields() {
		fields = append(fields, jsonName(f))
	}
	for _, d := range settingDocs {
		docs = append(docs, d.Key)
	}
	slices.Sort(fields)
	slices.Sort(docs)
	if !slices.Equal(fields, docs) {
		t.Errorf("settingDocs keys %v, InitOptions fields %v: document every initializationOptions field (host/lsp/settings.go)", docs, fields)
	}

	ts := filepath.Join("..", "..", "editors", "vscode", "src", "config.ts")
	b, err := os.ReadFile(ts)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	i := strings.Index(src, "export function hostSettings(")
	if i < 0 {
		t.Fatalf("%s: no hostSettings function", ts)
	}
	src = src[i:]
	if j := strings.Index(src, "\n}\n"); j >= 0 {
		src = src[:j]
	}
	var read []string
	for _, m := range regexp.MustCompile(`get<.*?>\("([A-Za-z]+)"\)`).FindAllStringSubmatch(src, -1) {
		read = append(read, m[1])
	}
	slices.Sort(read)
	if !slices.Equal(read, docs) {
		t.Errorf("%s hostSettings reads %v; the generated settings are %v", ts, read, docs)
	}

	var modes []string
	for m := permissions.Mode(0); !strings.HasPrefix(m.String(), "Mode("); m++ {
		modes = append(modes, m.String())
	}
	for _, d := range settingDocs {
		if d.Key != "mode" {
			continue
		}
		var enum []string
		for _, e := range d.Enum {
			enum = append(enum, e.Value)
		}
		if !slices.Equal(enum, modes) {
			t.Errorf("mode enum %v, permissions modes %v", enum, modes)
		}
	}
}

// settingSchema is the JSON schema of one VS Code setting, its keys in the order package.json
// writes them.
type settingSchema struct {
	Type                 string         `json:"type"`
	Items                *settingSchema `json:"items,omitempty"`
	Enum                 []string       `json:"enum,omitempty"`
	Default              any            `json:"default,omitempty"`
	EnumDescriptions     []string       `json:"enumDescriptions,omitempty"`
	Minimum              *float64       `json:"minimum,omitempty"`
	Scope                string         `json:"scope,omitempty"`
	MarkdownDescription  string         `json:"markdownDescription,omitempty"`
	Properties           properties     `json:"properties,omitempty"`
	AdditionalProperties *settingSchema `json:"additionalProperties,omitempty"`
}

// properties keeps the Go struct's field order (a map would sort them).
type properties []property

type property struct {
	Name   string
	Schema *settingSchema
}

func (ps properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(p.Name)
		if err != nil {
			return nil, err
		}
		v, err := marshal(p.Schema)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping (descriptions are shown as they are written).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// generateSettings is the text between the markers: one `"switchboard.<key>": {...},` per
// settingDoc, each line starting with indent.
func generateSettings(indent string) (string, error) {
	fields := map[string]reflect.Type{}
	for f := range reflect.TypeFor[wire.InitOptions]().Fields() {
		fields[jsonName(f)] = f.Type
	}
	var out strings.Builder
	for _, d := range settingDocs {
		typ, ok := fields[d.Key]
		if !ok {
			return "", fmt.Errorf("settingDocs: InitOptions has no field %q", d.Key)
		}
		if d.Shape != nil {
			typ = reflect.TypeOf(d.Shape)
		}
		enums := map[string][]string{}
		for _, e := range d.Enums {
			enums[e.Property] = e.Values
		}
		s, err := schemaOf(typ, enums)
		if err != nil {
			return "", fmt.Errorf("setting %s: %v", d.Key, err)
		}
		s.Default = d.Default
		s.Minimum = d.Minimum
		s.Scope = d.Scope
		s.MarkdownDescription = d.Description
		for _, e := range d.Enum {
			s.Enum = append(s.Enum, e.Value)
			s.EnumDescriptions = append(s.EnumDescriptions, e.Description)
		}
		compact, err := marshal(map[string]*settingSchema{"switchboard." + d.Key: s})
		if err != nil {
			return "", err
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, compact, indent, "  "); err != nil {
			return "", err
		}
		// Drop the wrapping object's braces: keep `"switchboard.key": {...}`.
		body := strings.TrimSpace(pretty.String())
		body = strings.TrimSpace(body[1 : len(body)-1])
		out.WriteString(indent + strings.ReplaceAll(body, "\n"+indent+"  ", "\n"+indent) + ",\n")
	}
	return out.String(), nil
}

// schemaOf maps a Go type to the JSON schema VS Code understands. enums gives the values of string
// properties by name.
func schemaOf(t reflect.Type, enums map[string][]string) (*settingSchema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return &settingSchema{Type: "string"}, nil
	case reflect.Bool:
		return &settingSchema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return &settingSchema{Type: "number"}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, fmt.Errorf("%s has no schema (raw JSON): give settingDoc.Shape", t)
		}
		items, err := schemaOf(t.Elem(), enums)
		if err != nil {
			return nil, err
		}
		return &settingSchema{Type: "array", Items: items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: map keys must be strings", t)
		}
		v, err := schemaOf(t.Elem(), enums)
		if err != nil {
			return nil, err
		}
		return &settingSchema{Type: "object", AdditionalProperties: v}, nil
	case reflect.Struct:
		s := &settingSchema{Type: "object"}
		for f := range t.Fields() {
			name := jsonName(f)
			if name == "" {
				continue
			}
			p, err := schemaOf(f.Type, enums)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			if values, ok := enums[name]; ok && p.Type == "string" {
				p.Enum = values
			}
			s.Properties = append(s.Properties, property{name, p})
		}
		return s, nil
	}
	return nil, fmt.Errorf("%s has no settings schema", t)
}

// jsonName is the field's name on the wire, "" when it is not marshalled.
func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return name
}

// userOnlyScopes are the VS Code scopes that a workspace's settings cannot set.
var userOnlyScopes = []string{"machine", "application"}

// TestSettingsUserOnly: every switchboard setting chooses what runs, where secrets go or how the
// gate decides, so each is machine (or application) scope in package.json, restrictedConfigurations
// lists each, and the extension reads each from the user level only (config.ts userOnlySettings).
func TestSettingsUserOnly(t *testing.T) {
	b, err := os.ReadFile(packageJSONPath)
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Contributes struct {
			Configuration struct {
				Properties map[string]struct {
					Scope string `json:"scope"`
				} `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
		Capabilities struct {
			UntrustedWorkspaces struct {
				RestrictedConfigurations []string `json:"restrictedConfigurations"`
			} `json:"untrustedWorkspaces"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k, p := range pkg.Contributes.Configuration.Properties {
		if !strings.HasPrefix(k, "switchboard.") {
			continue
		}
		keys = append(keys, k)
		if !slices.Contains(userOnlyScopes, p.Scope) {
			t.Errorf("%s has scope %q; want one of %v (a workspace must not set it)", k, p.Scope, userOnlyScopes)
		}
	}
	slices.Sort(keys)
	restricted := slices.Sorted(slices.Values(pkg.Capabilities.UntrustedWorkspaces.RestrictedConfigurations))
	if !slices.Equal(restricted, keys) {
		t.Errorf("restrictedConfigurations %v, settings %v", restricted, keys)
	}

	ts := filepath.Join("..", "..", "editors", "vscode", "src", "config.ts")
	src, err := os.ReadFile(ts)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`userOnlySettings = \[([^\]]*)\]`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("%s: no userOnlySettings list", ts)
	}
	var userOnly []string
	for _, q := range regexp.MustCompile(`"([A-Za-z]+)"`).FindAllSubmatch(m[1], -1) {
		userOnly = append(userOnly, "switchboard."+string(q[1]))
	}
	slices.Sort(userOnly)
	if !slices.Equal(userOnly, keys) {
		t.Errorf("%s userOnlySettings %v, settings %v", ts, userOnly, keys)
	}
}
