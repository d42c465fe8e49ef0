package lspconn

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"

	"go.lsp.dev/jsonrpc2"
)

// heldWriter records each Write; a write waits while the gate is shut (a full pipe) and fails
// with the error queued for it, if any.
type heldWriter struct {
	mu     sync.Mutex
	gate   chan struct{} // nil: open
	writes [][]byte
	errs   []error // the results of the next writes, in order (nil: success)
}

func (w *heldWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	gate := w.gate
	w.mu.Unlock()
	if gate != nil {
		<-gate
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, bytes.Clone(p))
	if len(w.errs) > 0 {
		err := w.errs[0]
		w.errs = w.errs[1:]
		if err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// frames splits what was written into frame bodies, failing on a broken frame.
func frames(t *testing.T, writes [][]byte) []string {
	t.Helper()
	r := bufio.NewReader(bytes.NewReader(bytes.Join(writes, nil)))
	var out []string
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return out
		}
		n, ok := bytes.CutPrefix([]byte(line), []byte("Content-Length: "))
		if err != nil || !ok {
			t.Fatalf("broken frame header %q (%v)", line, err)
		}
		size, err := strconv.Atoi(string(bytes.TrimSpace(n)))
		if err != nil {
			t.Fatalf("bad length in %q", line)
		}
		if blank, _ := r.ReadString('\n'); blank != "\r\n" {
			t.Fatalf("header not ended by a blank line: %q", blank)
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatalf("frame cut short: %v", err)
		}
		out = append(out, string(body))
	}
}

// TestOutboxIdleWritesAtOnce: with no other reply coming (busy false or unset), each frame is
// its own write, framed as jsonrpc2's header stream frames it.
func TestOutboxIdleWritesAtOnce(t *testing.T) {
	for _, busy := range []func() bool{nil, func() bool { return false }} {
		w := &heldWriter{}
		o := &outbox{w: w, busy: busy}
		for i := range 3 {
			body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":null}`, i)
			n, err := o.write(body)
			if err != nil || n != len(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)) {
				t.Fatalf("write %d: %d, %v", i, n, err)
			}
		}
		if len(w.writes) != 3 {
			t.Fatalf("%d writes for 3 frames; want one each", len(w.writes))
		}
		if got, want := string(w.writes[0]), "Content-Length: 38\r\n\r\n"+`{"jsonrpc":"2.0","id":0,"result":null}`; got != want {
			t.Errorf("frame = %q; want %q", got, want)
		}
	}
}

// TestOutboxJoinsWhileAWriteWaits: frames written while a write waits on a full pipe go out
// together in one write after it, the writer that waited returns without waiting for them, and
// every frame arrives whole, once.
func TestOutboxJoinsWhileAWriteWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &heldWriter{gate: make(chan struct{})}
		o := &outbox{w: w}
		first := make(chan error, 1)
		go func() {
			_, err := o.write([]byte(`"first"`))
			first <- err
		}()
		synctest.Wait() // the first write waits on the full pipe
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { _, errs[i] = o.write(fmt.Appendf(nil, `"joined %d"`, i)) })
		}
		synctest.Wait() // the four wait for the write that carries them
		w.mu.Lock()
		close(w.gate)
		w.gate = nil
		w.mu.Unlock()
		if err := <-first; err != nil {
			t.Fatalf("first write: %v", err)
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("joined write %d: %v", i, err)
			}
		}
		if len(w.writes) != 2 {
			t.Fatalf("%d writes; want 2 (the waiting one, then the four joined)", len(w.writes))
		}
		got := frames(t, w.writes[1:])
		slices.Sort(got)
		if want := []string{`"joined 0"`, `"joined 1"`, `"joined 2"`, `"joined 3"`}; !slices.Equal(got, want) {
			t.Errorf("second write carried %q; want %q", got, want)
		}
		if got := frames(t, w.writes[:1]); !slices.Equal(got, []string{`"first"`}) {
			t.Errorf("first write carried %q", got)
		}
	})
}

// TestOutboxErrorsReachTheirWriters: a failed write's error goes to every writer whose frame it
// carried, and to none other.
func TestOutboxErrorsReachTheirWriters(t *testing.T) {
	for _, tc := range []struct {
		name                string
		errs                []error
		wantFirst, wantJoin error
	}{
		{"the first write fails", []error{syscall.EPIPE, nil}, syscall.EPIPE, nil},
		{"the joined write fails", []error{nil, syscall.EPIPE}, nil, syscall.EPIPE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &heldWriter{gate: make(chan struct{}), errs: tc.errs}
				o := &outbox{w: w}
				first := make(chan error, 1)
				go func() {
					_, err := o.write([]byte(`"first"`))
					first <- err
				}()
				synctest.Wait()
				var wg sync.WaitGroup
				errs := make([]error, 3)
				for i := range errs {
					wg.Go(func() { _, errs[i] = o.write([]byte(`"joined"`)) })
				}
				synctest.Wait()
				w.mu.Lock()
				close(w.gate)
				w.gate = nil
				w.mu.Unlock()
				if err := <-first; !errors.Is(err, tc.wantFirst) || (err == nil) != (tc.wantFirst == nil) {
					t.Errorf("first writer got %v; want %v", err, tc.wantFirst)
				}
				wg.Wait()
				for i, err := range errs {
					if !errors.Is(err, tc.wantJoin) || (err == nil) != (tc.wantJoin == nil) {
						t.Errorf("joined writer %d got %v; want %v", i, err, tc.wantJoin)
					}
				}
			})
		})
	}
}

// TestOutboxConcurrentWritersKeepOrder: writers on many goroutines, always told more replies are
// coming, so they yield and join each other's writes: every frame arrives whole and once, and
// each goroutine's frames in the order it wrote them.
func TestOutboxConcurrentWritersKeepOrder(t *testing.T) {
	w := &heldWriter{}
	o := &outbox{w: w, busy: func() bool { return true }}
	const writers, each = 16, 200
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := o.write(fmt.Appendf(nil, `{"g":%d,"i":%d}`, g, i)); err != nil {
					t.Errorf("write: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := frames(t, w.writes)
	if len(got) != writers*each {
		t.Fatalf("%d frames arrived; want %d", len(got), writers*each)
	}
	next := make([]int, writers)
	for _, f := range got {
		var g, i int
		if _, err := fmt.Sscanf(f, `{"g":%d,"i":%d}`, &g, &i); err != nil {
			t.Fatalf("frame %q: %v", f, err)
		}
		if i != next[g] {
			t.Fatalf("writer %d: frame %d arrived where %d was due", g, i, next[g])
		}
		next[g]++
	}
	t.Logf("%d frames in %d writes", len(got), len(w.writes))
}

// TestStreamWritesThroughOutbox: a reply written by jsonrpc2 through the Stream is one LSP frame
// on the wire.
func TestStreamWritesThroughOutbox(t *testing.T) {
	w := &heldWriter{}
	s := NewStream(struct {
		io.Reader
		io.Writer
		io.Closer
	}{bytes.NewReader(nil), w, io.NopCloser(nil)}, StreamOptions{})
	resp := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(7), jsonrpc2.RawMessage(`"ok"`), nil)
	if _, err := s.Write(t.Context(), resp); err != nil {
		t.Fatal(err)
	}
	got := frames(t, w.writes)
	if len(got) != 1 || len(w.writes) != 1 {
		t.Fatalf("%d frames in %d writes; want 1 in 1", len(got), len(w.writes))
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(got[0]), &m); err != nil || m["result"] != "ok" || m["id"] != float64(7) {
		t.Errorf("frame %q (%v)", got[0], err)
	}
}

// TestStreamWritesReuseNoBuffer: Stream.Write encodes into reused buffers; replies written at
// once by many goroutines, joining one another's writes (busy) while a write waits, each
// arrive whole and as written: no buffer is reused while its frame is still to be copied.
func TestStreamWritesReuseNoBuffer(t *testing.T) {
	w := &heldWriter{}
	s := NewStream(struct {
		io.Reader
		io.Writer
		io.Closer
	}{bytes.NewReader(nil), w, io.NopCloser(nil)}, StreamOptions{Busy: func() bool { return true }})
	const writers, each = 8, 100
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				// Sizes vary, so that a reused buffer would leave another frame's bytes behind.
				text := strings.Repeat(strconv.Itoa(g), 1+(i*7+g)%40)
				resp := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(int64(g*each+i)), jsonrpc2.RawMessage(strconv.Quote(text)), nil)
				if _, err := s.Write(t.Context(), resp); err != nil {
					t.Errorf("write: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := frames(t, w.writes)
	if len(got) != writers*each {
		t.Fatalf("%d frames arrived; want %d", len(got), writers*each)
	}
	seen := map[int]bool{}
	for _, f := range got {
		var m struct {
			ID     int    `json:"id"`
			Result string `json:"result"`
		}
		if err := json.Unmarshal([]byte(f), &m); err != nil {
			t.Fatalf("frame %q: %v", f, err)
		}
		g, i := m.ID/each, m.ID%each
		if want := strings.Repeat(strconv.Itoa(g), 1+(i*7+g)%40); m.Result != want || seen[m.ID] {
			t.Fatalf("frame %q: want result %q, once", f, want)
		}
		seen[m.ID] = true
	}
}
