package host

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
)

func TestChoices(t *testing.T) {
	o := ChoiceOptions{Yes: "Yes", No: "No", Max: 3, Reserved: []string{"Decline"}}
	one := func(f mcpbridge.ElicitField) mcpbridge.Elicitation {
		return mcpbridge.Elicitation{Server: "s", Fields: []mcpbridge.ElicitField{f}}
	}
	enum := func(titles ...string) mcpbridge.ElicitField {
		f := mcpbridge.ElicitField{Name: "c", Type: "string", EnumTitles: titles}
		for i := range titles {
			f.Enum = append(f.Enum, string(rune('a'+i)))
		}
		return f
	}
	label, cs, ok := Choices(one(mcpbridge.ElicitField{Name: "ok", Title: "Proceed", Type: "boolean"}), o)
	if !ok || label != "Proceed" || len(cs) != 2 || cs[0].Title != "Yes" || cs[0].Reply.Elicit.Content["ok"] != true || cs[1].Reply.Elicit.Content["ok"] != false {
		t.Errorf("yes/no: %q %+v %v", label, cs, ok)
	}
	label, cs, ok = Choices(one(enum("Red", "Blue")), o)
	if !ok || label != "c" || len(cs) != 2 || cs[1].Title != "Blue" || cs[1].Reply.Elicit.Action != mcpbridge.ElicitAccept || cs[1].Reply.Elicit.Content["c"] != "b" {
		t.Errorf("choice: %q %+v %v", label, cs, ok)
	}
	long := strings.Repeat("x", 60)
	for name, e := range map[string]mcpbridge.Elicitation{
		"too many choices":     one(enum("1", "2", "3", "4")),
		"a reserved title":     one(enum("Red", "Decline")),
		"titles cut the same":  one(enum(long+"1", long+"2")),
		"a text field":         one(mcpbridge.ElicitField{Name: "t", Type: "string"}),
		"two fields":           {Fields: []mcpbridge.ElicitField{{Name: "a", Type: "boolean"}, {Name: "b", Type: "boolean"}}},
		"a page to open (url)": {Mode: "url", Fields: []mcpbridge.ElicitField{{Name: "a", Type: "boolean"}}},
	} {
		if _, cs, ok := Choices(e, o); ok {
			t.Errorf("%s: asked with buttons %+v, want no buttons", name, cs)
		}
	}
}
