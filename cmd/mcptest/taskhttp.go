package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Tasks over streamable HTTP (--tasks with --http): the task server of tasks.go answers the
// requests that are its business from the POST that carries them, as it does on stdio, and passes
// the rest to the mcp-go handler. tasks/result (2025-11-25) answers with an event stream, since
// it may carry the task's question (elicitation/create) before its result; the client's answer to
// that question comes as a POST of its own (answered 202 Accepted).
func taskHTTP(ts *taskStore, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m taskMessage
		if json.Unmarshal(body, &m) != nil {
			next.ServeHTTP(w, r)
			return
		}
		out := make(chan []byte, 4)
		if !ts.handle(m, func(b []byte) { out <- b }) {
			next.ServeHTTP(w, r)
			return
		}
		if m.Method == "" { // the client's answer to the task's question
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if m.Method != "tasks/result" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(<-out) // ignore error: the client is gone
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		flusher, _ := w.(http.Flusher)
		for {
			select {
			case b := <-out:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
				if flusher != nil {
					flusher.Flush()
				}
				var sent struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(b, &sent) == nil && sent.Method == "" && bytes.Equal(sent.ID, m.ID) {
					return // the result: the stream ends
				}
			case <-r.Context().Done():
				return
			}
		}
	})
}
