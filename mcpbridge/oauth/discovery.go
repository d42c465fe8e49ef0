package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// maxMetadata bounds a metadata document (protected resource or authorization server).
const maxMetadata = 1 << 20

// resourceMetadata is the part of a protected resource metadata document (RFC 9728) the sign-in
// reads.
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// findResourceMetadata finds the server's protected resource metadata the way the 2025-11-25
// spec orders it: the resource_metadata of the server's challenge (only on the server's own
// origin), else the well-known URL with the server's path, else the one at the root. It returns
// the path URL (the one mcp-go derives itself), the document as sent, and the document,
// whose resource must name this server: a document naming another resource is refused (a token
// minted for it would be handed to this server).
func findResourceMetadata(ctx context.Context, hc *http.Client, serverURL, challenge string) (string, []byte, resourceMetadata, error) {
	su, err := url.Parse(serverURL)
	if err != nil {
		return "", nil, resourceMetadata{}, err
	}
	var candidates []string
	if rm := challengeParam(challenge, "resource_metadata"); rm != "" {
		if u, err := url.Parse(rm); err == nil && u.IsAbs() && OriginOf(u) == OriginOf(su) {
			candidates = append(candidates, rm)
		}
	}
	root := su.Scheme + "://" + su.Host + "/.well-known/oauth-protected-resource"
	pathURL := root
	if p := strings.TrimSuffix(su.EscapedPath(), "/"); p != "" {
		pathURL = root + p
	}
	candidates = append(candidates, pathURL)
	if pathURL != root {
		candidates = append(candidates, root)
	}
	for _, c := range candidates {
		var doc resourceMetadata
		raw, err := getJSON(ctx, hc, c, &doc)
		if err != nil {
			return "", nil, resourceMetadata{}, fmt.Errorf("protected resource metadata %s: %w", c, err)
		}
		if raw == nil {
			continue
		}
		if doc.Resource == "" {
			return "", nil, resourceMetadata{}, fmt.Errorf("the protected resource metadata at %s names no resource", c)
		}
		if !resourceBinds(doc.Resource, su) {
			return "", nil, resourceMetadata{}, fmt.Errorf("the protected resource metadata at %s is for resource %q, not this server (%s): refusing to sign in", c, doc.Resource, serverURL)
		}
		return pathURL, raw, doc, nil
	}
	return "", nil, resourceMetadata{}, fmt.Errorf("the server publishes no protected resource metadata (tried %s)", strings.Join(candidates, ", "))
}

// resourceBinds: the declared resource is this server's URL or a prefix of it on a path segment
// boundary (https://host for https://host/mcp), on the same origin.
func resourceBinds(resource string, server *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || !r.IsAbs() || OriginOf(r) != OriginOf(server) || r.RawQuery != server.RawQuery || r.Fragment != "" {
		return false
	}
	rp, sp := strings.TrimSuffix(r.EscapedPath(), "/"), strings.TrimSuffix(server.EscapedPath(), "/")
	return rp == sp || strings.HasPrefix(sp, rp+"/")
}

// getJSON GETs u and decodes a 200 answer into v, returning the body as sent; nil for any other
// status.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, PlainHTTPError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return raw, nil
}

// asFeatures are the authorization server metadata fields mcp-go does not read.
type asFeatures struct {
	Issuer string `json:"issuer"`
	// IssParameter: authorization responses carry iss (RFC 9207), and one without it is refused.
	IssParameter bool `json:"authorization_response_iss_parameter_supported"`
	// CIMD: a client ID metadata document URL is accepted as the client_id.
	CIMD bool `json:"client_id_metadata_document_supported"`
}

// metadataTap sits under mcp-go's discovery. It answers mcp-go's request for the protected
// resource metadata with the document findResourceMetadata found and checked (wherever that
// was: the challenge's URL or the root), so both use one document; and it keeps the
// authorization server metadata documents mcp-go fetches, so the sign-in reads the fields mcp-go
// drops from the very document mcp-go validated, without fetching it again.
type metadataTap struct {
	next    http.RoundTripper
	prmURL  string // the path URL mcp-go asks
	prmBody []byte

	mu   sync.Mutex
	docs []asFeatures // every well-known JSON document seen, in order
}

func (t *metadataTap) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.prmBody != nil && req.Method == http.MethodGet && req.URL.String() == t.prmURL {
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(t.prmBody)),
			ContentLength: int64(len(t.prmBody)), Request: req}, nil
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK || !strings.Contains(req.URL.Path, "/.well-known/") {
		return resp, err
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxMetadata))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var f asFeatures
	if rerr == nil && json.Unmarshal(body, &f) == nil && f.Issuer != "" {
		t.mu.Lock()
		t.docs = append(t.docs, f)
		t.mu.Unlock()
	}
	return resp, err
}

// features are those of the document that declared issuer (the one mcp-go accepted).
func (t *metadataTap) features(issuer string) (asFeatures, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.docs) - 1; i >= 0; i-- {
		if t.docs[i].Issuer == issuer {
			return t.docs[i], nil
		}
	}
	return asFeatures{}, errors.New("the authorization server metadata was not seen")
}
