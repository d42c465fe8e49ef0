// Package registrytest serves a small MCP Registry (the v0.1 read API) on loopback for tests:
// GET /v0.1/servers, /v0.1/servers/{name}/versions and /v0.1/servers/{name}/versions/{version}
// ("latest" too), from server responses given as JSON.
package registrytest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Registry is a running fixture registry.
type Registry struct {
	*httptest.Server
	// Hits counts the version documents served; Requests every request.
	Hits, Requests atomic.Int64

	mu     sync.Mutex
	docs   map[string][]byte // name + "@" + version -> body
	latest map[string]string // name -> version
	down   bool
	raw    map[string]http.HandlerFunc // path -> handler, for hostile answers
}

// New starts a registry serving docs (each a v0.1 server response: {"server": {...}, "_meta":
// ...}); the last document of a name is its latest. It stops at the end of the test.
func New(t testing.TB, docs ...[]byte) *Registry {
	r := &Registry{docs: map[string][]byte{}, latest: map[string]string{}, raw: map[string]http.HandlerFunc{}}
	for _, d := range docs {
		r.Add(t, d)
	}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

// Add serves one more document.
func (r *Registry) Add(t testing.TB, doc []byte) {
	var v struct {
		Server struct{ Name, Version string } `json:"server"`
	}
	if err := json.Unmarshal(doc, &v); err != nil || v.Server.Name == "" {
		t.Fatalf("registrytest: not a server response: %v", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.docs[v.Server.Name+"@"+v.Server.Version] = doc
	r.latest[v.Server.Name] = v.Server.Version
}

// Handle answers path (as requested, escaped) with h instead.
func (r *Registry) Handle(path string, h http.HandlerFunc) {
	r.mu.Lock()
	r.raw[path] = h
	r.mu.Unlock()
}

// SetDown makes every request fail with 503 (a registry that cannot be reached).
func (r *Registry) SetDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.Requests.Add(1)
	r.mu.Lock()
	down, h := r.down, r.raw[req.URL.EscapedPath()]
	r.mu.Unlock()
	switch {
	case down:
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	case h != nil:
		h(w, req)
		return
	}
	rest, ok := strings.CutPrefix(req.URL.Path, "/v0.1/servers")
	if !ok {
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if rest == "" || rest == "/" {
		r.mu.Lock()
		var list []json.RawMessage
		for name, v := range r.latest {
			list = append(list, r.docs[name+"@"+v])
		}
		r.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"servers": list, "metadata": map[string]any{"count": len(list)}})
		return
	}
	name, version, ok := strings.Cut(strings.TrimPrefix(rest, "/"), "/versions/")
	if !ok {
		http.NotFound(w, req)
		return
	}
	r.mu.Lock()
	if version == "latest" {
		version = r.latest[name]
	}
	doc, ok := r.docs[name+"@"+version]
	r.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"title":"Not Found","status":404,"detail":"Server not found"}`))
		return
	}
	r.Hits.Add(1)
	w.Write(doc)
}
