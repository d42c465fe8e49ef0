//go:build unix

package broker

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// More attacks on the boundary between windows for tasks (see taskwindows_test.go), from a review
// with fresh eyes.

// TestTaskNamedInAnotherCaseNotSkipped: the daemon reads a frame's related-task only when the
// frame may name one, and so must never skip one that it would refuse read in full. A server's
// task ids need not say "task" (mcp-go's are UUIDs): a window then names another window's task as
// "io.modelcontextprotocol/related-TASK" {"TaskId": ...}, or with the Kelvin sign or the long s
// (which Go's encoding/json folds to k and s when it matches a struct field), and a server's log
// line does the same: the daemon's own reading calls each ambiguous, and none may go as though it
// named no task.
func TestTaskNamedInAnotherCaseNotSkipped(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	record := dir + "/record"
	req := request(launch("--tasks", "--task-prefix", "id-", "--say", "--record", record))
	a := attachWin(t, "A", cfg, req)
	b := attachWin(t, "B", cfg, req)
	a.initialize()
	b.initialize()
	task := startTask(t, a, "1", 1000)
	if strings.Contains(strings.ToLower(task), "task") {
		t.Fatalf("task id %q says task", task)
	}
	metas := []string{
		`"_meta":{"io.modelcontextprotocol/related-TASK":{"TASKID":%q}}`,
		`"_meta":{"io.modelcontextprotocol/related-Task":{"TaskId":%q}}`,
		`"_META":{"IO.MODELCONTEXTPROTOCOL/RELATED-TASK":{"TASKID":%q}}`,
		"\"_meta\":{\"io.modelcontextprotocol/related-tas\u212a\":{\"tas\u212aId\":%q}}",
		"\"_meta\":{\"io.modelcontextprotocol/related-ta\u017fk\":{\"ta\u017fkId\":%q}}",
	}
	for i, m := range metas {
		meta := fmt.Sprintf(m, task)
		id := fmt.Sprint(10 + i)
		b.send(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"mallory %d"},%s}}`, id, i, meta)
		if f := b.until(id); f[len(f)-1].Error == nil {
			t.Errorf("B's call naming A's task as %s: %s, want refused", meta, f[len(f)-1].raw)
		}
	}
	b.sync()
	data, _ := os.ReadFile(record)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "> ") && strings.Contains(l, "mallory") {
			t.Errorf("the server read a call of B's naming A's task: %s", l)
		}
	}

	// The server's log lines naming A's task so: to no one (as when named ambiguously in lower
	// case), and never to B.
	var lines []string
	for i, m := range metas {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"news %d",%s}}`, i, fmt.Sprintf(m, task)))
	}
	fb := append(say(b, "20", lines...), b.sync()...)
	fa := a.sync()
	for i := range metas {
		notSeen(t, "A", fa, fmt.Sprintf("news %d", i))
		notSeen(t, "B", fb, fmt.Sprintf("news %d", i))
	}
}
