package session_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

func TestManagerModels(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"data":[{"id":"llama3"},{"id":"qwen3"}]}`)
	}))
	t.Cleanup(ts.Close)
	m := session.NewManager(session.Options{Provider: session.ProviderConfig{Type: "openai-compatible", BaseURL: ts.URL + "/v1", Model: "qwen3"}})
	t.Cleanup(m.Close)
	cur, models, err := m.Models(context.Background())
	if err != nil || cur != "qwen3" || len(models) != 2 || models[0].ID != "llama3" {
		t.Errorf("Models = %q %+v %v", cur, models, err)
	}
	m.UseProvider(sessiontest.Script(t, ""))
	if _, _, err := m.Models(context.Background()); !errors.Is(err, session.ErrNoModelList) {
		t.Errorf("script provider: err = %v, want ErrNoModelList", err)
	}
}
