package llm

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReadSSE(t *testing.T) {
	in := ": comment\nevent: a\ndata: {\"x\":1}\n\ndata:two\ndata: lines\n\nevent: last\ndata: end"
	var got []SSEEvent
	if err := ReadSSE(strings.NewReader(in), func(e SSEEvent) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []SSEEvent{{"a", `{"x":1}`}, {"", "two\nlines"}, {"last", "end"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := Retry{Now: func() time.Time { return now }}
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second, true},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond, true},
		{http.Header{"Retry-After": {now.Add(4 * time.Second).Format(http.TimeFormat)}}, 4 * time.Second, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{}, 0, false},
	} {
		d, ok := r.retryAfter(tc.h)
		if d != tc.want || ok != tc.ok {
			t.Errorf("%v: %v %v, want %v %v", tc.h, d, ok, tc.want, tc.ok)
		}
	}
}
