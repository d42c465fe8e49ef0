package mcpbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ElicitField is one field of an elicitation form, flattened from the requested schema (MCP
// allows a flat object of primitive properties). Editors show one input per field, in order.
type ElicitField struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is "string", "number", "integer", "boolean", or "array" (a multi-select of Enum).
	Type     string `json:"type"`
	Required bool   `json:"required"`
	// Enum are the allowed values (string enums, oneOf/anyOf consts, array items); EnumTitles
	// their labels, same length.
	Enum       []string `json:"enum,omitempty"`
	EnumTitles []string `json:"enumTitles,omitempty"`
	Format     string   `json:"format,omitempty"` // string: email, uri, date, date-time
	MinLength  *int     `json:"minLength,omitempty"`
	MaxLength  *int     `json:"maxLength,omitempty"`
	Minimum    *float64 `json:"minimum,omitempty"`
	Maximum    *float64 `json:"maximum,omitempty"`
	MinItems   *int     `json:"minItems,omitempty"`
	MaxItems   *int     `json:"maxItems,omitempty"`
	Default    any      `json:"default,omitempty"`
}

// propSchema is the part of a property schema we read.
type propSchema struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Enum        []string        `json:"enum"`
	EnumNames   []string        `json:"enumNames"` // legacy titles
	OneOf       []constTitle    `json:"oneOf"`
	AnyOf       []constTitle    `json:"anyOf"`
	Items       *itemsSchema    `json:"items"`
	Format      string          `json:"format"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	Default     json.RawMessage `json:"default"`
}

type constTitle struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

type itemsSchema struct {
	Type  string       `json:"type"`
	Enum  []string     `json:"enum"`
	AnyOf []constTitle `json:"anyOf"`
	OneOf []constTitle `json:"oneOf"`
}

// ParseElicitSchema flattens a requested schema into fields, in the order of its properties.
// A schema outside what MCP allows (nested objects, unknown types) is an error naming the
// property.
func ParseElicitSchema(raw json.RawMessage) ([]ElicitField, error) {
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("missing")
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object schema: %v", err)
	}
	if top.Type != "object" {
		return nil, fmt.Errorf("type must be \"object\", not %q", top.Type)
	}
	names, props, err := orderedObject(top.Properties)
	if err != nil {
		return nil, fmt.Errorf("properties: %v", err)
	}
	for _, r := range top.Required {
		if !slices.Contains(names, r) {
			return nil, fmt.Errorf("required names %q, which is not a property", r)
		}
	}
	fields := make([]ElicitField, 0, len(names))
	for i, name := range names {
		var p propSchema
		if err := json.Unmarshal(props[i], &p); err != nil {
			return nil, fmt.Errorf("property %q: %v", name, err)
		}
		f := ElicitField{Name: name, Title: p.Title, Description: p.Description, Type: p.Type,
			Required: slices.Contains(top.Required, name), Format: p.Format,
			MinLength: p.MinLength, MaxLength: p.MaxLength, Minimum: p.Minimum, Maximum: p.Maximum,
			MinItems: p.MinItems, MaxItems: p.MaxItems}
		switch p.Type {
		case "string":
			f.Enum, f.EnumTitles = enumOf(p.Enum, p.EnumNames, p.OneOf, p.AnyOf)
		case "number", "integer", "boolean":
		case "array":
			if p.Items == nil {
				return nil, fmt.Errorf("property %q: an array needs items with an enum", name)
			}
			f.Enum, f.EnumTitles = enumOf(p.Items.Enum, nil, p.Items.OneOf, p.Items.AnyOf)
			if len(f.Enum) == 0 {
				return nil, fmt.Errorf("property %q: an array needs items with an enum", name)
			}
		default:
			return nil, fmt.Errorf("property %q: type %q is not allowed in a form (string, number, integer, boolean, or array of enum)", name, p.Type)
		}
		if len(p.Default) > 0 && string(p.Default) != "null" {
			var d any
			if json.Unmarshal(p.Default, &d) == nil && validValue(f, d) == nil {
				f.Default = d
			}
		}
		fields = append(fields, f)
	}
	return fields, nil
}

func enumOf(enum, names []string, oneOf, anyOf []constTitle) (values, titles []string) {
	if len(enum) > 0 {
		values = slices.Clone(enum)
		titles = slices.Clone(enum)
		if len(names) == len(enum) {
			titles = slices.Clone(names)
		}
		return values, titles
	}
	for _, c := range append(slices.Clone(oneOf), anyOf...) {
		values = append(values, c.Const)
		t := c.Title
		if t == "" {
			t = c.Const
		}
		titles = append(titles, t)
	}
	return values, titles
}

// orderedObject returns an object's keys in document order and their raw values.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("must be an object")
	}
	var names []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name := tok.(string) // object keys are strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if slices.Contains(names, name) {
			return nil, nil, fmt.Errorf("property %q twice", name)
		}
		names = append(names, name)
		vals = append(vals, v)
	}
	return names, vals, nil
}

// ValidateElicitation checks content against the form's fields: every required field present,
// no unknown field, each value of its field's type and within its limits. The error names the
// field.
func ValidateElicitation(fields []ElicitField, content map[string]any) error {
	for name := range content {
		if !slices.ContainsFunc(fields, func(f ElicitField) bool { return f.Name == name }) {
			return fmt.Errorf("%q is not a field of this form", name)
		}
	}
	for _, f := range fields {
		v, ok := content[f.Name]
		if !ok || v == nil {
			if f.Required {
				return fmt.Errorf("%s is required", f.label())
			}
			continue
		}
		if err := validValue(f, v); err != nil {
			return fmt.Errorf("%s: %v", f.label(), err)
		}
	}
	return nil
}

func (f ElicitField) label() string {
	if f.Title != "" && f.Title != f.Name {
		return fmt.Sprintf("%q (%s)", f.Name, f.Title)
	}
	return fmt.Sprintf("%q", f.Name)
}

// validValue checks one JSON value (as encoding/json decodes it into any) against f.
func validValue(f ElicitField, v any) error {
	switch f.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return errors.New("must be a string")
		}
		n := utf8.RuneCountInString(s)
		if f.MinLength != nil && n < *f.MinLength {
			return fmt.Errorf("must be at least %d characters", *f.MinLength)
		}
		if f.MaxLength != nil && n > *f.MaxLength {
			return fmt.Errorf("must be at most %d characters", *f.MaxLength)
		}
		if len(f.Enum) > 0 && !slices.Contains(f.Enum, s) {
			return fmt.Errorf("must be one of %s", strings.Join(f.Enum, ", "))
		}
		return validFormat(f.Format, s)
	case "number", "integer":
		x, ok := v.(float64)
		if !ok {
			return errors.New("must be a number")
		}
		if f.Type == "integer" && x != math.Trunc(x) {
			return errors.New("must be a whole number")
		}
		if f.Minimum != nil && x < *f.Minimum {
			return fmt.Errorf("must be at least %g", *f.Minimum)
		}
		if f.Maximum != nil && x > *f.Maximum {
			return fmt.Errorf("must be at most %g", *f.Maximum)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return errors.New("must be true or false")
		}
	case "array":
		xs, ok := v.([]any)
		if !ok {
			return errors.New("must be a list")
		}
		if f.MinItems != nil && len(xs) < *f.MinItems {
			return fmt.Errorf("needs at least %d choices", *f.MinItems)
		}
		if f.MaxItems != nil && len(xs) > *f.MaxItems {
			return fmt.Errorf("takes at most %d choices", *f.MaxItems)
		}
		for _, x := range xs {
			s, ok := x.(string)
			if !ok || !slices.Contains(f.Enum, s) {
				return fmt.Errorf("each choice must be one of %s", strings.Join(f.Enum, ", "))
			}
		}
	}
	return nil
}

func validFormat(format, s string) error {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return errors.New("must be an email address")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return errors.New("must be a URI with a scheme (https://...)")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return errors.New("must be a date (YYYY-MM-DD)")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return errors.New("must be a date and time (RFC 3339, e.g. 2026-11-30T12:00:00Z)")
		}
	}
	return nil
}
