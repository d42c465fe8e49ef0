package broker

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzMayNameTask: the fast path never skips a frame that relatedTask reads as naming a task,
// ambiguously included (the seeds run with every go test; go test -fuzz looks further).
func FuzzMayNameTask(f *testing.F) {
	for _, s := range []string{
		`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"x"}}}`,
		`{"_meta":{"io.modelcontextprotocol/related-TASK":{"TASKID":"x"}}}`,
		`{"_meta":{"io.modelcontextprotocol/related-Task":{"TaskId":"x"}}}`,
		"{\"_meta\":{\"io.modelcontextprotocol/related-tas\u212a\":{\"tas\u212aId\":\"x\"}}}",
		"{\"_meta\":{\"io.modelcontextprotocol/related-ta\u017fk\":{\"ta\u017fkId\":\"x\"}}}",
		`{"_meta":{"io.modelcontextprotocol/related-t\u0061sk":{"t\u0061skId":"x"}}}`,
		`{"\u005fmeta":{"io.modelcontextprotocol/related-TASK":{"TASKID":"x"}}}`,
		`{"name":"echo","arguments":{"text":"hello"}}`,
		`{"progressToken":1,"progress":1,"_meta":{"progressToken":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		if _, named := relatedTask(params); named && !mayNameTask(params) && taskKey(params) {
			t.Errorf("relatedTask reads %s as naming a task, mayNameTask skips it", params)
		}
	})
}

// taskKey: some object in the JSON text p has a member that a reader folding case (and
// escapes) might take for related-task or taskId: without one, no reader finds a task in p
// (relatedTask also says a frame names one ambiguously when its _meta is ambiguous, whatever
// is in it).
func taskKey(p []byte) bool {
	var v any
	if json.Unmarshal(p, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if strings.EqualFold(k, relatedTaskKey) || strings.EqualFold(k, "taskId") || walk(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

func TestMayNameTask(t *testing.T) {
	for s, want := range map[string]bool{
		"task": true, "TASK": true, "tAsK": true, "ta\u017fk": true, "tas\u212a": true, "TA\u017f\u212a": true,
		`\u0074`: true, "": false, "tsak": false, "ta sk": false, "tas": false, "ask": false, "k": false,
		"\u212a": false, "\u017fk": false, "s\u212a": false,
	} {
		if got := mayNameTask([]byte(s)); got != want {
			t.Errorf("mayNameTask(%q) = %v, want %v", s, got, want)
		}
	}
}
