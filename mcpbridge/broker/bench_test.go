//go:build unix

package broker

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"testing"
	"time"
)

// benchCalls makes b.N echo calls over rw, one at a time, as a window's agent does.
func benchCalls(b *testing.B, w io.Writer, r *bufio.Reader) {
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	if _, err := r.ReadBytes('\n'); err != nil {
		b.Fatal(err)
	}
	fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b.ResetTimer()
	for i := range b.N {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`+"\n", i+1)
		if _, err := r.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallDirect is the floor: mcptest on the caller's own pipes, as in-window.
func BenchmarkCallDirect(b *testing.B) {
	cmd := exec.Command(mcptestBin)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	benchCalls(b, in, bufio.NewReader(out))
}

// BenchmarkCallShared is the same call through the daemon (goal: at most 1.25x the floor).
func BenchmarkCallShared(b *testing.B) {
	dir := b.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		Serve(ctx, Options{Dir: dir + "/s", Idle: time.Minute, Ready: closeOnWrite(ready)})
	}()
	defer func() { cancel(); <-done }()
	<-ready
	c, err := Attach(ctx, Config{Dir: dir + "/s"}, request(launch()))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchCalls(b, c, bufio.NewReader(c))
}
