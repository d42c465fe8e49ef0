package wire

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite shapes.json from the Go structs")

// contract lists every struct of the contract, by the name the editors use for it.
var contract = []any{
	InitOptions{}, Provider{}, ServerStatus{}, SharedStatus{}, ServersChangedParams{}, ToolInfo{}, ToolsParams{},
	ReconnectParams{}, AllowlistGetResult{}, AllowlistSetParams{}, AllowlistSetResult{}, Approval{},
	ApproveParams{}, ApprovalResolvedParams{}, PromptAbout{}, TrustParams{}, CallToolParams{}, ToolResult{},
	ChatParams{}, ChatResult{}, CancelParams{}, Event{}, ToolCallEvent{}, ToolResultEvent{}, Usage{},
	Elicitation{}, ElicitField{}, ElicitParams{}, ElicitationResolvedParams{},
	ModelsResult{}, ModelInfo{}, Price{},
	PinsParams{}, PinsAcceptParams{}, PinsResult{}, ServerPins{}, PinChange{}, PinsChangedParams{},
	ResourcesParams{}, Resource{}, ResourceTemplate{}, ResourcesResult{}, ReadResourceParams{}, ResourceContent{},
	ReadResourceResult{}, UnsubscribeParams{}, Prompt{}, PromptArgument{}, GetPromptParams{}, PromptMessage{},
	GetPromptResult{}, CompleteParams{}, CompleteResult{}, ResourceRef{}, ResourcesChangedParams{},
	InputRequest{}, InputParams{}, InputResolvedParams{}, PolicyRef{},
	TaskInfo{}, TasksResult{}, CancelTaskParams{},
	ViewRef{}, ViewParams{}, ViewResult{}, ViewCSP{}, ViewPermissions{}, ViewCallToolParams{}, ViewOpenLinkParams{}, ViewUpdateModelContextParams{}, ViewContextNote{},
	ViewOpenLinkResult{}, ViewOpenInBrowserResult{},
	ViewMessageParams{}, ViewMessageResult{}, ViewMessageNotice{}, ChatEndParams{},
}

// Field is one JSON field of a wire struct as shapes.json describes it.
type Field struct {
	Type     string `json:"type"`               // string | number | boolean | any | <Type> | <type>[] | map
	Optional bool   `json:"optional,omitempty"` // omitempty: may be absent
	Nullable bool   `json:"nullable,omitempty"` // a pointer without omitempty: may be null
}

// Shapes is the whole of shapes.json.
type Shapes struct {
	Comment       string                      `json:"//"`
	Commands      []string                    `json:"commands"`
	Notifications []string                    `json:"notifications"`
	Types         map[string]map[string]Field `json:"types"`
}

func describe() Shapes {
	s := Shapes{
		Comment:       "Generated from host/wire by `go test ./host/wire -update`; the editors' tests read it. Do not edit.",
		Commands:      slices.Sorted(slices.Values(Commands)),
		Notifications: slices.Sorted(slices.Values(Notifications)),
		Types:         map[string]map[string]Field{},
	}
	for _, v := range contract {
		t := reflect.TypeOf(v)
		fields := map[string]Field{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			omit := strings.Contains(opts, "omitempty")
			ft := f.Type
			fd := Field{Optional: omit}
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
				fd.Nullable = !omit
			}
			fd.Type = typeName(ft)
			fields[name] = fd
		}
		s.Types[t.Name()] = fields
	}
	return s
}

var rawMessage = reflect.TypeOf(json.RawMessage(nil))

func typeName(t reflect.Type) string {
	switch {
	case t == rawMessage, t.Kind() == reflect.Interface:
		return "any"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64:
		return "number"
	case t.Kind() == reflect.Slice:
		return typeName(t.Elem()) + "[]"
	case t.Kind() == reflect.Map:
		return "map"
	case t.Kind() == reflect.Pointer:
		return typeName(t.Elem())
	case t.Kind() == reflect.Struct:
		return t.Name()
	}
	panic("wire: no shape for " + t.String())
}

// TestShapes keeps shapes.json equal to the structs, and every struct it references listed.
func TestShapes(t *testing.T) {
	s := describe()
	for typ, fields := range s.Types {
		for name, f := range fields {
			base := strings.TrimSuffix(f.Type, "[]")
			switch base {
			case "string", "number", "boolean", "any", "map":
			default:
				if _, ok := s.Types[base]; !ok {
					t.Errorf("%s.%s has type %s, which is not in the contract list", typ, name, base)
				}
			}
		}
	}
	got, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile("shapes.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("shapes.json")
	if err != nil {
		t.Fatalf("%v (run go test ./host/wire -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("shapes.json is stale: run go test ./host/wire -update (and update the editors' types)")
	}
}

// TestDocumentNamesEveryMethod: PROTOCOL.md beside this package spells every command and
// notification.
func TestDocumentNamesEveryMethod(t *testing.T) {
	doc, err := os.ReadFile("PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range append(slices.Clone(Commands), Notifications...) {
		if !bytes.Contains(doc, []byte("`"+n+"`")) {
			t.Errorf("PROTOCOL.md does not mention `%s`", n)
		}
	}
}
