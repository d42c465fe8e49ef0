package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// endlessLine writes 'x' to stdout without a newline until the reader goes away.
func endlessLine(stdout io.Writer) int {
	chunk := []byte(strings.Repeat("x", 1<<16))
	for {
		if _, err := stdout.Write(chunk); err != nil {
			return 0
		}
	}
}

// hugeFrame writes one valid notifications/message frame of about mb megabytes.
func hugeFrame(stdout io.Writer, mb int) error {
	w := bufio.NewWriterSize(stdout, 1<<20)
	fmt.Fprint(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`)
	chunk := strings.Repeat("y", 1<<20)
	for range mb {
		if _, err := w.WriteString(chunk); err != nil {
			return err
		}
	}
	fmt.Fprint(w, "\"}}\n")
	return w.Flush()
}

// spawnGrandchild starts a long sleep and reports its pid on stderr: "grandchild pid N" for one
// that inherits the process group (like npx's node child), "setsid grandchild pid N" for one that
// starts its own session and so leaves the group (like a daemonising helper).
func spawnGrandchild(stderr io.Writer, setsid bool) error {
	cmd := exec.Command("sleep", "300")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	what := "grandchild"
	if setsid {
		detach(cmd)
		what = "setsid grandchild"
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "mcptest: %s pid %d\n", what, cmd.Process.Pid)
	go func() { _ = cmd.Wait() }() // ignore error: reaped when it ends
	return nil
}

// sayLines serves --say: the call's lines go to the client as they are (only $TOKEN replaced by
// the call's progress token, as JSON), then its result says how many were written.
func sayLines(call []byte, id json.RawMessage, out io.Writer) {
	var m struct {
		Params struct {
			Arguments struct {
				Lines []string `json:"lines"`
			} `json:"arguments"`
			Meta struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(call, &m) // ignore error: no lines then
	tok := string(m.Params.Meta.ProgressToken)
	if tok == "" {
		tok = "null"
	}
	for _, l := range m.Params.Arguments.Lines {
		_, _ = io.WriteString(out, strings.ReplaceAll(l, "$TOKEN", tok)+"\n") // ignore error: the client is gone
	}
	_, _ = out.Write(append(reply(id, mcp.NewToolResultText(fmt.Sprintf("said %d lines", len(m.Params.Arguments.Lines)))), '\n')) // ignore error: as above
}
