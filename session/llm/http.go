package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"time"
)

// APIError is a provider's HTTP error, with the provider's own message.
type APIError struct {
	Provider   string // "openai", "anthropic"
	Status     int    // HTTP status; 0 for an error event inside a stream
	Type       string // the provider's error type/code, when it gives one
	Message    string // the provider's message, or the body when it is not the expected JSON
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Type != "" {
		fmt.Fprintf(&b, " (%s)", e.Type)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Retryable reports whether the status is worth retrying: 408, 409 (Anthropic lock contention),
// 429, 5xx (529 is Anthropic's "overloaded").
func Retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// Retry is the retry policy of the HTTP providers: exponential backoff on Retryable statuses,
// honouring Retry-After (seconds or an HTTP date) and retry-after-ms. Transport errors are not
// retried (a local server that is not running will not start by waiting).
type Retry struct {
	MaxRetries int           // 0 = 3; negative = no retries
	Base       time.Duration // first backoff; 0 = 1 s
	Max        time.Duration // backoff cap and the longest Retry-After honoured; 0 = 60 s
	// Sleep waits d or until ctx ends. nil = a real timer. Tests inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock for HTTP-date Retry-After values. nil = time.Now.
	Now func() time.Time
}

func (r Retry) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PostStream POSTs a JSON body that asks for a server-sent event stream, with the given extra
// headers, through Do (so with the same retries and error parsing).
func (r Retry) PostStream(ctx context.Context, client *http.Client, provider, url string, body []byte,
	header map[string]string, parseErr func(body []byte) (typ, msg string)) (*http.Response, error) {
	return r.Do(ctx, client, provider, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		return req, nil
	}, parseErr)
}

// Do sends the request newReq builds (once per attempt) and returns a 2xx response. A non-2xx
// response becomes an *APIError built by parseErr from the body (its message, type). Retryable
// statuses are retried with backoff; a Retry-After longer than Max ends the retries.
func (r Retry) Do(ctx context.Context, client *http.Client, provider string,
	newReq func(context.Context) (*http.Request, error),
	parseErr func(body []byte) (typ, msg string)) (*http.Response, error) {
	maxRetries := r.MaxRetries
	if maxRetries == 0 {
		maxRetries = 3
	}
	base, maxWait := r.Base, r.Max
	if base <= 0 {
		base = time.Second
	}
	if maxWait <= 0 {
		maxWait = 60 * time.Second
	}
	if client == nil {
		client = http.DefaultClient
	}
	for attempt := 0; ; attempt++ {
		req, err := newReq(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: build request: %w", provider, err)
		}
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%s: %w", provider, err)
		}
		if resp.StatusCode/100 == 2 {
			return resp, nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)) // ignore error: best-effort message
		resp.Body.Close()
		apiErr := &APIError{Provider: provider, Status: resp.StatusCode}
		apiErr.Type, apiErr.Message = parseErr(body)
		if apiErr.Message == "" && apiErr.Type == "" {
			apiErr.Message = strings.TrimSpace(string(body))
		}
		wait, hinted := r.retryAfter(resp.Header)
		apiErr.RetryAfter = wait
		if !Retryable(resp.StatusCode) || maxRetries < 0 || attempt >= maxRetries {
			return nil, apiErr
		}
		if !hinted {
			wait = base << attempt
			if wait > maxWait || wait <= 0 {
				wait = maxWait
			}
		} else if wait > maxWait {
			return nil, apiErr
		}
		if err := r.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

func (r Retry) retryAfter(h http.Header) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		now := time.Now
		if r.Now != nil {
			now = r.Now
		}
		d := t.Sub(now())
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// SSEEvent is one server-sent event.
type SSEEvent struct {
	Event string // the "event:" field, "" when absent
	Data  string // "data:" lines joined with "\n"
}

// ReadSSE reads server-sent events from r and calls fn for each. It returns nil at EOF, fn's
// error, or the read error. Lines may be up to 4 MiB.
func ReadSSE(r io.Reader, fn func(SSEEvent) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var ev SSEEvent
	var data []string
	dispatch := func() error {
		if len(data) == 0 && ev.Event == "" {
			return nil
		}
		ev.Data = strings.Join(data, "\n")
		err := fn(ev)
		ev, data = SSEEvent{}, data[:0]
		return err
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if err := dispatch(); err != nil {
				return err
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment / keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Event = value
		case "data":
			data = append(data, value)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return dispatch()
}

// ErrNoAPIKey is wrapped by a provider constructor's error when the API key is missing.
var ErrNoAPIKey = errors.New("API key missing")

// MaxModelsBody bounds a /models answer.
const MaxModelsBody = 8 << 20

// GetModels GETs url (a /models endpoint answering {"data":[{"id", "display_name", "created" or
// "created_at"}]}) through Do, with the given headers, and returns the models in the API's order.
// Pages (Anthropic's has_more/last_id) are followed up to 20 pages.
func (r Retry) GetModels(ctx context.Context, client *http.Client, provider, url string, header map[string]string,
	parseErr func(body []byte) (typ, msg string)) ([]ModelInfo, error) {
	var out []ModelInfo
	next := url
	for range 20 {
		resp, err := r.Do(ctx, client, provider, func(ctx context.Context) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Accept", "application/json")
			for k, v := range header {
				req.Header.Set(k, v)
			}
			return req, nil
		}, parseErr)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, MaxModelsBody))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: models: %w", provider, err)
		}
		var page struct {
			Data []struct {
				ID          string          `json:"id"`
				DisplayName string          `json:"display_name"`
				Created     int64           `json:"created"`
				CreatedAt   json.RawMessage `json:"created_at"`
			} `json:"data"`
			HasMore bool   `json:"has_more"`
			LastID  string `json:"last_id"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return nil, fmt.Errorf("%s: models: the answer is not a model list: %v", provider, err)
		}
		for _, d := range page.Data {
			if d.ID == "" {
				continue
			}
			mi := ModelInfo{ID: d.ID, DisplayName: d.DisplayName, Created: d.Created}
			if mi.Created == 0 && len(d.CreatedAt) > 0 {
				var s string
				if json.Unmarshal(d.CreatedAt, &s) == nil {
					if t, err := time.Parse(time.RFC3339, s); err == nil {
						mi.Created = t.Unix()
					}
				}
			}
			out = append(out, mi)
		}
		if !page.HasMore || page.LastID == "" {
			return out, nil
		}
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		next = url + sep + "after_id=" + neturl.QueryEscape(page.LastID)
	}
	return out, nil
}

// StreamEnd is how a provider's stream ended, once its events are read: err from reading (an
// *APIError as it is, anything else wrapped as "read stream"), ctx's error when the turn was
// cancelled, or an error when the stream stopped before its final event (what names it). nil
// when it finished.
func StreamEnd(ctx context.Context, provider string, err error, finished bool, what string) error {
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		if _, ok := err.(*APIError); ok {
			return err
		}
		return fmt.Errorf("%s: read stream: %w", provider, err)
	case ctx.Err() != nil:
		return ctx.Err()
	case !finished:
		return fmt.Errorf("%s: the stream ended before %s", provider, what)
	}
	return nil
}
