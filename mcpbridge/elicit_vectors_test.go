package mcpbridge

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The shared elicitation vectors (testdata/elicit_vectors.json): the host's validator is the
// reference, and the VS Code and Neovim tests run the same file against their validators. -update
// (cap_test.go) rewrites each field from ParseElicitSchema.

const vectorsFile = "testdata/elicit_vectors.json"

type elicitVectors struct {
	About   string          `json:"about"`
	Fields  []fieldVector   `json:"fields"`
	Content []contentVector `json:"content"`
}

type fieldVector struct {
	Name     string            `json:"name"`
	Property json.RawMessage   `json:"property"`
	Field    json.RawMessage   `json:"field,omitempty"`
	Accept   []json.RawMessage `json:"accept"`
	Reject   []json.RawMessage `json:"reject"`
	Text     []textVector      `json:"text,omitempty"`
}

type textVector struct {
	In      string          `json:"in"`
	Value   json.RawMessage `json:"value,omitempty"`
	Problem bool            `json:"problem,omitempty"`
}

type contentVector struct {
	Name       string          `json:"name"`
	Schema     json.RawMessage `json:"schema"`
	Fields     json.RawMessage `json:"fields,omitempty"`
	Content    json.RawMessage `json:"content"`
	ErrorField *string         `json:"errorField"`
}

func loadVectors(t *testing.T) elicitVectors {
	t.Helper()
	b, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	var v elicitVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", vectorsFile, err)
	}
	return v
}

// validateOne runs ValidateElicitation on a one-field form whose answer is value.
func validateOne(t *testing.T, fields []ElicitField, name string, value json.RawMessage) error {
	t.Helper()
	var content map[string]any
	if err := json.Unmarshal([]byte(`{`+strconv.Quote(name)+`:`+string(value)+`}`), &content); err != nil {
		t.Fatalf("value %s: %v", value, err)
	}
	return ValidateElicitation(fields, content)
}

func TestElicitVectors(t *testing.T) {
	v := loadVectors(t)
	for i, fv := range v.Fields {
		schema := `{"type":"object","properties":{` + strconv.Quote(fv.Name) + `:` + string(fv.Property) + `}}`
		fields, err := ParseElicitSchema(json.RawMessage(schema))
		if err != nil || len(fields) != 1 {
			t.Errorf("%s: ParseElicitSchema = %+v, %v", fv.Name, fields, err)
			continue
		}
		got, _ := json.Marshal(fields[0]) // ignore error: a plain struct
		if *update {
			v.Fields[i].Field = got
		} else if !jsonEqual(got, fv.Field) {
			t.Errorf("%s: the host sends the field %s, the vectors say %s (go test -run TestElicitVectors -update)", fv.Name, got, fv.Field)
		}
		for _, val := range fv.Accept {
			if err := validateOne(t, fields, fv.Name, val); err != nil {
				t.Errorf("%s = %s: the host refuses it (%v), the vectors accept it", fv.Name, val, err)
			}
		}
		for _, val := range fv.Reject {
			err := validateOne(t, fields, fv.Name, val)
			if err == nil || !strings.Contains(err.Error(), strconv.Quote(fv.Name)) {
				t.Errorf("%s = %s: the host says %v, the vectors refuse it", fv.Name, val, err)
			}
		}
		// What typed text becomes is the editors' business; the value it becomes must be one the
		// host takes.
		for _, tv := range fv.Text {
			if tv.Problem == (len(tv.Value) > 0) {
				t.Errorf("%s: text %q needs exactly one of value and problem", fv.Name, tv.In)
			}
			if len(tv.Value) > 0 {
				if err := validateOne(t, fields, fv.Name, tv.Value); err != nil {
					t.Errorf("%s: text %q becomes %s, which the host refuses: %v", fv.Name, tv.In, tv.Value, err)
				}
			}
		}
		if len(fv.Accept) == 0 || len(fv.Reject) == 0 {
			t.Errorf("%s: needs values on both sides", fv.Name)
		}
	}
	for i, cv := range v.Content {
		fields, err := ParseElicitSchema(cv.Schema)
		if err != nil {
			t.Errorf("%s: ParseElicitSchema: %v", cv.Name, err)
			continue
		}
		got, _ := json.Marshal(fields) // ignore error: plain structs
		if *update {
			v.Content[i].Fields = got
		} else if !jsonEqual(got, cv.Fields) {
			t.Errorf("%s: the host sends the fields %s, the vectors say %s (go test -run TestElicitVectors -update)", cv.Name, got, cv.Fields)
		}
		var content map[string]any
		if err := json.Unmarshal(cv.Content, &content); err != nil {
			t.Fatalf("%s: content: %v", cv.Name, err)
		}
		err = ValidateElicitation(fields, content)
		switch {
		case cv.ErrorField == nil && err != nil:
			t.Errorf("%s: the host refuses %s (%v), the vectors accept it", cv.Name, cv.Content, err)
		case cv.ErrorField != nil && (err == nil || !strings.HasPrefix(err.Error(), strconv.Quote(*cv.ErrorField))):
			t.Errorf("%s: the host says %v, the vectors want a refusal naming %q", cv.Name, err, *cv.ErrorField)
		}
	}
	if *update {
		writeVectors(t, v)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x) // ignore error: decoded JSON
	ya, _ := json.Marshal(y) // ignore error: decoded JSON
	return bytes.Equal(xa, ya)
}

// writeVectors keeps the file readable: one line per field vector entry.
func writeVectors(t *testing.T, v elicitVectors) {
	t.Helper()
	var b bytes.Buffer
	line := func(v any) string {
		x, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(x)
	}
	b.WriteString("{\n  \"about\": " + line(v.About) + ",\n  \"fields\": [\n")
	for i, f := range v.Fields {
		b.WriteString("    {\"name\": " + line(f.Name) + ",\n     \"property\": " + string(f.Property) + ",\n     \"field\": " + string(f.Field) +
			",\n     \"accept\": " + line(f.Accept) + ",\n     \"reject\": " + line(f.Reject))
		if len(f.Text) > 0 {
			b.WriteString(",\n     \"text\": " + line(f.Text))
		}
		b.WriteString("}")
		if i < len(v.Fields)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  ],\n  \"content\": [\n")
	for i, c := range v.Content {
		b.WriteString("    " + line(c))
		if i < len(v.Content)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  ]\n}\n")
	if err := os.WriteFile(vectorsFile, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
