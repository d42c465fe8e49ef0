//go:build linux

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/host/lsptest"
)

// TestMain runs this test binary as `sbbench _translate` when a test starts it so.
func TestMain(m *testing.M) {
	if os.Getenv("SBBENCH_TEST_TRANSLATE") == "1" {
		os.Exit(childTranslator(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// TestTranslator drives the minimal LSP translator as sbbench does (the LSP driver, a real MCP
// server over stdio): every call must come back to its own caller with the server's text, calls
// in flight together included, and a tool's error must come back as one.
func TestTranslator(t *testing.T) {
	dir := t.TempDir()
	mcptest := filepath.Join(dir, "mcptest")
	if out, err := exec.Command("go", "build", "-o", mcptest, "github.com/switchboard-dev/switchboard/cmd/mcptest").CombinedOutput(); err != nil {
		t.Fatalf("go build mcptest: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, mcptest, "--roots")
	cmd.Env = []string{"SBBENCH_TEST_TRANSLATE=1"}
	c, err := startLSP(cmd, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.initialize(ctx, nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	var st []serverStatus
	if err := c.executeCommand(ctx, "switchboard.servers", nil, &st); err != nil {
		t.Fatal(err)
	}
	if done, err := allReady(st, 1); !done || err != nil {
		t.Fatalf("switchboard.servers = %+v (%v), want one ready server", st, err)
	}

	b := &bench{}
	echo := b.lspEcho(c, echoArgs, "")
	var wg sync.WaitGroup
	errs := make([]error, 600) // more than the translator's 256 slots of calls in flight
	for i := range errs {      // 8 at a time, as the throughput rows call
		if i%8 == 0 {
			wg.Wait()
		}
		wg.Go(func() { errs[i] = echo(ctx, i) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// Text that JSON must escape comes back as the server wrote it.
	want := "quote \" backslash \\ newline \n tab \t é ☃"
	res, err := b.sbCall(ctx, c, serverName(0), echoTool, echoArgs(want))
	if err != nil || !strings.Contains(res.Text, want) {
		t.Fatalf("echo %q = %+v, %v", want, res, err)
	}
	// In the contract's shape, as the host answers.
	if res.Name != "mcp__"+serverName(0)+"__"+echoTool || res.Truncated || res.Bytes == 0 {
		t.Fatalf("echo = %+v, want the name as called, not truncated, its size in bytes", res)
	}
	// The driver declares textOnce, as both shipped editors do: the text comes once.
	if !res.TextOmitted || len(res.Content) != 0 {
		t.Fatalf("echo = %+v, want textOmitted and no text block left in content", res)
	}
	// A tool's error result comes back as one, with its text.
	res, err = b.sbCall(ctx, c, serverName(0), "fail", map[string]any{"message": "no such luck"})
	if err == nil || !strings.Contains(err.Error(), "no such luck") {
		t.Fatalf("fail = %+v, %v; want a tool error saying %q", res, err, "no such luck")
	}
	// The server's own request (roots/list) is answered as the host answers it with no folders.
	res, err = b.sbCall(ctx, c, serverName(0), "roots", map[string]any{})
	if err != nil || !strings.Contains(res.Text, `"roots":[]`) {
		t.Fatalf("roots = %+v, %v; want the translator's empty roots/list answer", res, err)
	}
	// A command it does not know is an error, not silence.
	if err := c.executeCommand(ctx, "switchboard.reconnect", nil, nil); err == nil {
		t.Fatal("switchboard.reconnect succeeded; the translator knows only servers and callTool")
	} else if !errors.As(err, new(*lsptest.Error)) {
		t.Fatalf("switchboard.reconnect: %v, want a JSON-RPC error", err)
	}
	// shutdown, then exit with its stdin still open: exit alone must end it, cleanly.
	if err := c.call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := c.notify("exit", nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the translator ended with %v after exit, want status 0", err)
		}
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		t.Fatal("the translator did not end after exit")
	}
	_ = c.stdin.Close()
}
