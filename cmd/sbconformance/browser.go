package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"
)

// followRedirect is the browser of a sign-in: the suite's authorization server approves at
// once and answers the authorization request with a redirect to the redirect URI, so the
// person's part is following that redirect to Switchboard's loopback callback. Only a loopback
// http URL is followed, as a browser would only reach Switchboard there.
func followRedirect(log *slog.Logger) func(ctx context.Context, authURL string) error {
	hc := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	get := func(ctx context.Context, u string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // ignore error: a page nobody reads
		resp.Body.Close()
		return resp, nil
	}
	return func(ctx context.Context, authURL string) error {
		resp, err := get(ctx, authURL)
		if err != nil {
			return fmt.Errorf("authorization endpoint: %w", err)
		}
		loc, err := resp.Location()
		if err != nil {
			return fmt.Errorf("the authorization endpoint answered %d without a redirect", resp.StatusCode)
		}
		if ip := net.ParseIP(loc.Hostname()); loc.Scheme != "http" || ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("the authorization endpoint redirects to %s, not to the loopback callback", redactQuery(loc))
		}
		log.Info("browser: following the redirect to the callback", "to", redactQuery(loc))
		if _, err := get(ctx, loc.String()); err != nil {
			return fmt.Errorf("callback: %w", err)
		}
		return nil
	}
}

// redactQuery is u without its query (the authorization code stays out of the log).
func redactQuery(u *url.URL) string {
	c := *u
	c.RawQuery = ""
	return c.String()
}
