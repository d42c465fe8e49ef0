package oauth

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// HTTPClient is the client for one HTTP or SSE server at base. The user's custom headers (config
// `headers`) and any credentials go only to base's origin (scheme, host and port):
//   - a redirect to another origin is refused (the server is reported failed and names it):
//     following it without the headers would fail anyway, and the request body (a tool call's
//     arguments) would still go there;
//   - the transport strips those headers from any request to another origin, whatever sent the
//     client there (an SSE endpoint event, a later mcp-go change).
func HTTPClient(base string, headers map[string]string) (*http.Client, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: url %q: %w", base, err)
	}
	origin := OriginOf(u)
	names := []string{"Authorization", "Proxy-Authorization", "Cookie"}
	for k := range headers {
		names = append(names, k)
	}
	return &http.Client{
		Transport: &originTransport{next: http.DefaultTransport, origin: origin, private: names},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if o := OriginOf(req.URL); o != origin {
				return fmt.Errorf("redirect to another origin (%q) refused: the server's headers go only to %q; set its url to where it lives", o, origin)
			}
			if len(via) >= 10 {
				return fmt.Errorf("stopped after %d redirects", len(via))
			}
			return nil
		},
	}, nil
}

// OriginOf is scheme://host:port, lower case, with the scheme's default port made explicit.
func OriginOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https", "wss":
			port = "443"
		case "http", "ws":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// originTransport removes private headers from requests that leave the configured origin.
type originTransport struct {
	next    http.RoundTripper
	origin  string
	private []string
}

func (t *originTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if OriginOf(req.URL) != t.origin {
		req = req.Clone(req.Context()) // a RoundTripper must not modify the caller's request
		for _, h := range t.private {
			req.Header.Del(h)
		}
	}
	return t.next.RoundTrip(req)
}

// PlainHTTPError keeps what a person needs from mcp-go's layered HTTP errors ("transport error:
// failed to send request: failed to send request: Post ...: dial tcp ...: connection refused"):
// the network error itself. Other errors pass through.
func PlainHTTPError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		// The query and any user:password can hold values from the user's environment.
		shown := ue.URL
		if u, err := url.Parse(ue.URL); err == nil {
			u.User, u.RawQuery, u.Fragment = nil, "", ""
			shown = u.String()
		}
		return fmt.Errorf("%s %s: %w", ue.Op, shown, ue.Err)
	}
	return err
}
