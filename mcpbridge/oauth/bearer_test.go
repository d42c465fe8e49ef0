package oauth

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

func TestOAuthTokensStayOnOrigin(t *testing.T) {
	var got []string
	var mu sync.Mutex
	rec := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		got = append(got, r.URL.Host+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})
	store := tokenstore.NewMemory()
	store.Save(context.Background(), "s", tokenstore.Credential{URL: "https://mcp.example/mcp", AccessToken: "T"})
	b := NewBearer(store, "s", "https://mcp.example/mcp")
	rt := b.Wrap(rec)
	for _, u := range []string{"https://mcp.example/mcp", "https://other.example/x", "http://mcp.example/mcp"} {
		req, _ := http.NewRequest("GET", u, nil)
		rt.RoundTrip(req)
	}
	// A credential issued for another URL is not sent either.
	b2 := NewBearer(store, "s", "https://mcp.example/other")
	req, _ := http.NewRequest("GET", "https://mcp.example/other", nil)
	b2.Wrap(rec).RoundTrip(req)
	want := []string{"mcp.example Bearer T", "other.example ", "mcp.example ", "mcp.example "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("requests = %q, want %q", got, want)
	}
}
