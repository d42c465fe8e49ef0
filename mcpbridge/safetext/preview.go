package safetext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of Arguments, in characters of the arguments' compact JSON.
const (
	ArgValueLimit = 80 // one value
	ArgKeyLimit   = 40 // one key name; a longer one ends with Marker, which says it was cut
	ArgKeysListed = 30 // key names listed as left out; the rest are counted exactly
)

// Arguments renders a tool call's JSON arguments for a one-line prompt, in about limit characters.
// An object is shown key by key, in order, each value cut with a marker that says how much it cut;
// when the budget runs out, the keys left out are named ("(+2 more keys: then, force; <whole>)",
// where whole says where to see the whole call), so a long first value never hides a later key.
// Past ArgKeysListed names the rest are counted ("..., and 12 more keys not named here; <whole>").
// Other JSON is compact JSON, bounded; not-JSON input is shown quoted. Everything is escaped
// (Line), so nothing can hide text or fake a line break.
func Arguments(raw []byte, limit int, whole string) string {
	t := bytes.TrimSpace(raw)
	switch {
	case len(t) == 0 || string(t) == "null":
		return "{}"
	case !json.Valid(t):
		return Bounded(strconv.Quote(string(t)), limit)
	}
	keys, vals, ok := objectMembers(t)
	if !ok {
		var buf bytes.Buffer
		json.Compact(&buf, t) // ignore error: t is valid JSON
		return Bounded(buf.String(), limit)
	}
	var b strings.Builder
	b.WriteString("{")
	used := 0
	for i, k := range keys {
		kq, _ := json.Marshal(k) // ignore error: a string
		item := Bounded(string(kq), ArgKeyLimit) + ":" + Bounded(string(vals[i]), min(ArgValueLimit, limit))
		n := utf8.RuneCountInString(item)
		if i > 0 && used+n > limit {
			b.WriteString("} ")
			b.WriteString(leftOut(keys[i:], whole))
			return b.String()
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(item)
		used += n
	}
	b.WriteString("}")
	return b.String()
}

// leftOut names the keys a preview did not show, and where to see them.
func leftOut(keys []string, whole string) string {
	names := make([]string, 0, min(len(keys), ArgKeysListed))
	for _, k := range keys[:min(len(keys), ArgKeysListed)] {
		names = append(names, Bounded(k, ArgKeyLimit))
	}
	list := strings.Join(names, ", ")
	if n := len(keys) - ArgKeysListed; n > 0 {
		noun := "keys"
		if n == 1 {
			noun = "key"
		}
		list += fmt.Sprintf(", and %d more %s not named here", n, noun)
	}
	noun := "keys"
	if len(keys) == 1 {
		noun = "key"
	}
	return fmt.Sprintf("(+%d more %s: %s; %s)", len(keys), noun, list, whole)
}

// objectMembers returns the members of a JSON object in their order, each value as compact JSON;
// ok is false when t is not an object. A repeated key is listed each time it appears: the preview
// shows what the server will receive, and a JSON parser there may take either.
func objectMembers(t []byte) (keys []string, vals []json.RawMessage, ok bool) {
	if t[0] != '{' {
		return nil, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	if _, err := dec.Token(); err != nil {
		return nil, nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, isKey := tok.(string)
		var v json.RawMessage
		if !isKey || dec.Decode(&v) != nil {
			return nil, nil, false
		}
		var buf bytes.Buffer
		if json.Compact(&buf, v) == nil {
			v = buf.Bytes()
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals, true
}
