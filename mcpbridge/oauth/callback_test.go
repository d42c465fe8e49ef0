package oauth

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The browser gets the whole "signed in" page before the sign-in goes on: the sign-in closes
// the listener as soon as it ends, and an answer still buffered in the handler then reached the
// browser as a reset connection (TestSignInFromEditor saw EOF under load). The test holds the
// sign-in back (nobody receives from the channel) and requires the browser's answer to be
// complete meanwhile.
func TestCallbackAnsweredBeforeSignInGoesOn(t *testing.T) {
	cb := make(chan callbackResult) // unbuffered: the handler waits here until the sign-in reads
	srv := httptest.NewServer(callbackHandler("st", "https://as.example", false, cb))
	defer srv.Close()
	type answer struct {
		status int
		body   string
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		// A deadlock detector, not a timing assertion: without the fix the answer never comes
		// while the sign-in is held back.
		c := &http.Client{Timeout: 30 * time.Second}
		resp, err := c.Get(srv.URL + "/callback?code=abc&state=st")
		if err != nil {
			got <- answer{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- answer{resp.StatusCode, string(b), err}
	}()
	a := <-got
	if a.err != nil || a.status != http.StatusOK {
		go func() { <-cb }() // let the held handler end, so srv.Close does not wait for it
	}
	if a.err != nil || a.status != http.StatusOK || a.body != "Switchboard: signed in. You can close this tab.\n" {
		t.Fatalf("while the sign-in waits, the browser got %d %q %v; want the whole signed-in page", a.status, a.body, a.err)
	}
	if res := <-cb; res.err != nil || res.code != "abc" {
		t.Fatalf("callback result = %+v", res)
	}
}
