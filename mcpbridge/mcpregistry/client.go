package mcpregistry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Official is the official MCP Registry.
const Official = "https://registry.modelcontextprotocol.io"

// MaxDocument is the largest server.json response read (the official registry caps a
// description at 100 characters; real documents are a few KiB).
const MaxDocument = 1 << 20

// ErrNotFound is returned (wrapped) when the registry has no such server or version.
var ErrNotFound = errors.New("not in the registry")

// ErrUnreachable is returned (wrapped) when the registry did not answer: no connection, a
// timeout, a refused redirect, or an HTTP error status.
var ErrUnreachable = errors.New("the registry could not be reached")

// unreachable is ErrUnreachable with its cause.
type unreachable struct{ err error }

// cause is the innermost error of why the registry could not be reached ("connection
// refused", "HTTP 503"): enough for a person, unlike the whole chain of the request.
func cause(err error) string {
	for {
		var u *unreachable
		if errors.As(err, &u) {
			err = u.err
		}
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

func (u *unreachable) Error() string   { return u.err.Error() }
func (u *unreachable) Unwrap() []error { return []error{ErrUnreachable, u.err} }

// Client reads one registry. The zero value is not usable: use NewClient. Safe for concurrent use.
type Client struct {
	base string
	http *http.Client
	now  func() time.Time

	// memMu guards mem and failed: documents read by this process, by URL, and when and how
	// reading one last failed.
	memMu  sync.Mutex
	mem    map[string]memDoc
	failed map[string]failure
}

type failure struct {
	err error
	at  time.Time
}

// retryAfter is how long Lookup answers from a failure instead of asking the registry again: a
// registry that does not answer costs each server's start its timeout once, not at every retry.
const retryAfter = time.Minute

type memDoc struct {
	body []byte
	at   time.Time
}

// Options configure a Client.
type Options struct {
	// HTTP is the client requests go through (nil: a client with a 15 s timeout). Its
	// CheckRedirect is replaced: a redirect may not leave the registry's host.
	HTTP *http.Client
	Now  func() time.Time
}

// NormalizeURL checks a registry base URL and returns it without a trailing slash: https, or
// http to a loopback address (a registry on this machine).
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("mcpregistry: %q is not a registry URL (https://host[/path])", raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return "", fmt.Errorf("mcpregistry: registry %q must be https (plain http only to this machine)", raw)
	}
	// The v0.1 paths are added here: an administrator may give the base with them (Copilot's
	// docs warn against it; accept it anyway).
	p := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v0.1/servers")
	p = strings.TrimSuffix(p, "/v0.1")
	return u.Scheme + "://" + strings.ToLower(u.Host) + p, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// NewClient makes a client of the registry at base (see NormalizeURL).
func NewClient(base string, o Options) (*Client, error) {
	b, err := NormalizeURL(base)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 15 * time.Second}
	if o.HTTP != nil {
		cp := *o.HTTP
		hc = &cp
	}
	origin, _ := url.Parse(b)
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 3 {
			return errors.New("too many redirects")
		}
		// A registry is trusted by its address: a document served from elsewhere is not its own.
		if req.URL.Host != origin.Host || req.URL.Scheme != origin.Scheme {
			return fmt.Errorf("redirected to %s, another host than the registry's (%s): refused", req.URL.Redacted(), origin.Host)
		}
		return nil
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Client{base: b, http: hc, now: now, mem: map[string]memDoc{}, failed: map[string]failure{}}, nil
}

// URL is the registry's base URL, normalised.
func (c *Client) URL() string { return c.base }

func (c *Client) docURL(name, version string) string {
	return c.base + "/v0.1/servers/" + url.PathEscape(name) + "/versions/" + url.PathEscape(version)
}

// Get reads server name at version ("latest" for the newest) from the registry, now. The
// document is kept in memory for Lookup when it names an exact version.
func (c *Client) Get(ctx context.Context, name, version string) (*Response, error) {
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("mcpregistry: %w", err)
	}
	u := c.docURL(name, version)
	body, err := c.fetch(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("mcpregistry: get %s@%s from %s: %w", name, version, c.base, err)
	}
	r, err := parse(body)
	if err != nil {
		return nil, fmt.Errorf("mcpregistry: %s@%s from %s: %w", name, version, c.base, err)
	}
	if r.Server.Name != name {
		return nil, fmt.Errorf("mcpregistry: asked %s for %s, it answered with a server named %q", c.base, name, r.Server.Name)
	}
	if version != "latest" && r.Server.Version != version {
		return nil, fmt.Errorf("mcpregistry: asked %s for %s@%s, it answered with version %q", c.base, name, version, r.Server.Version)
	}
	if CheckVersion(r.Server.Version) == nil {
		c.keep(c.docURL(name, r.Server.Version), body)
	}
	return r, nil
}

// Lookup is Get of an exact version for admission: a document this process read less than
// maxAge ago is used as it is; else it is read again; when the registry cannot be reached, the
// copy this process read (of any age) is used. With neither, the error (ErrUnreachable when the
// registry did not answer) says so.
//
// There is no copy on disk: admission trusts only what this process read from the registry. A
// copy in the user's cache folder is the user's to edit, and one edited to match a hand-edited
// entry, with the network cut, would admit that entry under mcpAccess "registry".
func (c *Client) Lookup(ctx context.Context, name, version string, maxAge time.Duration) (*Response, error) {
	u := c.docURL(name, version)
	c.memMu.Lock()
	d, ok := c.mem[u]
	f, failed := c.failed[u]
	c.memMu.Unlock()
	if ok && c.now().Sub(d.at) < maxAge {
		return c.check(d.body, name, version)
	}
	var r *Response
	var err error
	if failed && c.now().Sub(f.at) < retryAfter {
		err = f.err
	} else {
		r, err = c.Get(ctx, name, version)
		c.memMu.Lock()
		if err != nil {
			c.failed[u] = failure{err, c.now()}
		} else {
			delete(c.failed, u)
		}
		c.memMu.Unlock()
	}
	if err == nil || errors.Is(err, ErrNotFound) {
		return r, err
	}
	if ok {
		return c.check(d.body, name, version)
	}
	return nil, err
}

func (c *Client) check(body []byte, name, version string) (*Response, error) {
	r, err := parse(body)
	if err != nil || r.Server.Name != name || r.Server.Version != version {
		return nil, fmt.Errorf("mcpregistry: the copy of %s@%s read before is not that server.json", name, version)
	}
	return r, nil
}

func (c *Client) keep(u string, body []byte) {
	c.memMu.Lock()
	c.mem[u] = memDoc{body: body, at: c.now()}
	c.memMu.Unlock()
}

func (c *Client) fetch(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &unreachable{err}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrNotFound
	case resp.StatusCode != http.StatusOK:
		return nil, &unreachable{fmt.Errorf("HTTP %d", resp.StatusCode)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocument+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxDocument {
		return nil, fmt.Errorf("the document is larger than %d bytes: refused", MaxDocument)
	}
	return body, nil
}

func parse(body []byte) (*Response, error) {
	var r Response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("not a v0.1 server response: %v", err)
	}
	if r.Server.Name == "" {
		return nil, errors.New(`not a v0.1 server response: no "server" with a name`)
	}
	return &r, nil
}
