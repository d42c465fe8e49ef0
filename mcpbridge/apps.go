package mcpbridge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// MCP Apps (the extension io.modelcontextprotocol/ui, spec 2026-01-26; issue 31): a tool's
// _meta.ui.resourceUri names a ui:// resource of type text/html;profile=mcp-app that the host
// shows in a sandboxed frame. The registry reads that resource when it lists the tools (connect,
// list_changed, reconnect) and keeps it: the view a front end shows is the copy read then, and
// its HTML (by hash), CSP and permissions are part of the tool's pinned definition, so a changed
// view is a changed tool, reviewed like one. A resource that changes later is not re-read until
// the server's tools are listed again.

// AppsExtension is the extension's identifier in capabilities.extensions.
const AppsExtension = "io.modelcontextprotocol/ui"

// AppMIMEType is the only resource type a view may have.
const AppMIMEType = "text/html;profile=mcp-app"

// maxViewBytes bounds one view's HTML (the example servers' single-file bundles are 200-700 KB).
const maxViewBytes = 4 << 20

// maxServerViewBytes bounds the HTML of one server's views kept together: a server may declare
// any number of tools, each with a view of its own of up to maxViewBytes, and the host keeps every
// view it reads (thousands of 4 MiB views would take the host's memory, and every server with it).
// The example servers have one view of 200-700 KB each. The views past it are not read.
const maxServerViewBytes = 32 << 20

// maxViewDomains bounds each CSP list of a view.
const maxViewDomains = 32

// Tool visibility (ToolUI.Visibility).
const (
	VisibleToModel = "model"
	VisibleToApp   = "app"
)

// ToolUI is a tool's _meta.ui: the view it declares and who may call it. Shared and immutable.
type ToolUI struct {
	ResourceURI string `json:"resourceUri"`
	// Visibility is as the tool declared it; nil means the default, ["model","app"].
	Visibility []string `json:"visibility,omitempty"`
	// View is the resource as read when the tools were listed (nil when ResourceURI is "").
	View *View `json:"-"`
}

// ModelVisible says whether the tool may be offered to (and called by) the model.
func (u *ToolUI) ModelVisible() bool {
	return u == nil || u.Visibility == nil || slices.Contains(u.Visibility, VisibleToModel)
}

// AppVisible says whether the server's views may call the tool.
func (u *ToolUI) AppVisible() bool {
	return u == nil || u.Visibility == nil || slices.Contains(u.Visibility, VisibleToApp)
}

// View is a ui:// resource as read from the server. Error, when set, says why it cannot be shown
// (read failed, wrong type, too big); HTML is then empty.
type View struct {
	URI         string          `json:"uri"`
	MIMEType    string          `json:"mimeType"`
	HTML        string          `json:"-"`
	SHA256      string          `json:"sha256,omitempty"`
	Bytes       int             `json:"bytes"`
	CSP         ViewCSP         `json:"csp"`
	Permissions ViewPermissions `json:"permissions"`
	// PrefersBorder is the resource's _meta.ui.prefersBorder (nil: the host decides).
	PrefersBorder *bool  `json:"prefersBorder,omitempty"`
	Error         string `json:"error,omitempty"`
	// Dropped lists the CSP entries left out because they are not plain origins (a quote, a
	// semicolon or a path could widen the policy): what the person reviews says so.
	Dropped []string `json:"dropped,omitempty"`
}

// ViewCSP is the origins a view declared it needs (_meta.ui.csp of the resource). Every entry is
// a checked origin ([cspSource]): nothing here can add a directive or a keyword.
type ViewCSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	FrameDomains    []string `json:"frameDomains,omitempty"`
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
}

// ViewPermissions is the browser features a view asked for (_meta.ui.permissions).
type ViewPermissions struct {
	Camera         bool `json:"camera,omitempty"`
	Microphone     bool `json:"microphone,omitempty"`
	Geolocation    bool `json:"geolocation,omitempty"`
	ClipboardWrite bool `json:"clipboardWrite,omitempty"`
}

// parseToolUI reads a tool's _meta: ui.resourceUri and ui.visibility, or the older flat key
// "ui/resourceUri". nil when the tool declares no view and no visibility.
func parseToolUI(meta json.RawMessage) *ToolUI {
	if len(meta) == 0 {
		return nil
	}
	var m struct {
		UI *struct {
			ResourceURI string          `json:"resourceUri"`
			Visibility  json.RawMessage `json:"visibility"`
		} `json:"ui"`
		Flat string `json:"ui/resourceUri"`
	}
	if json.Unmarshal(meta, &m) != nil {
		return nil
	}
	u := &ToolUI{ResourceURI: m.Flat}
	if m.UI != nil {
		if m.UI.ResourceURI != "" {
			u.ResourceURI = m.UI.ResourceURI
		}
		if len(m.UI.Visibility) > 0 && string(m.UI.Visibility) != "null" {
			var vis []string
			if json.Unmarshal(m.UI.Visibility, &vis) != nil {
				// A visibility that cannot be read is taken as app-only: never offer the model a
				// tool whose author may have meant to hide it.
				vis = []string{VisibleToApp}
			}
			u.Visibility = []string{}
			for _, v := range vis {
				if (v == VisibleToModel || v == VisibleToApp) && !slices.Contains(u.Visibility, v) {
					u.Visibility = append(u.Visibility, v)
				}
			}
		}
	}
	if u.ResourceURI == "" && u.Visibility == nil {
		return nil
	}
	return u
}

// withViews reads the _meta.ui of each tool and the view resources they name (each URI once).
// A view that cannot be read leaves its tool usable, its View.Error saying why.
func (c *conn) withViews(ctx context.Context, tools []wireTool) []wireTool {
	read := map[string]*View{}
	kept := 0 // bytes of HTML kept, at most maxServerViewBytes
	for i := range tools {
		t := &tools[i]
		t.ui = parseToolUI(t.Meta)
		if t.ui == nil || t.ui.ResourceURI == "" {
			continue
		}
		v, ok := read[t.ui.ResourceURI]
		if !ok {
			if kept < maxServerViewBytes {
				v = c.readView(ctx, t.ui.ResourceURI)
			}
			if v == nil || kept+len(v.HTML) > maxServerViewBytes {
				v = &View{URI: t.ui.ResourceURI, Error: fmt.Sprintf("the server's views together are over the %d MiB the host keeps of one server's views; this one was not kept", maxServerViewBytes>>20)}
			}
			kept += len(v.HTML)
			read[t.ui.ResourceURI] = v
		}
		t.ui.View = v
	}
	return tools
}

// readView reads one ui:// resource and checks it.
func (c *conn) readView(ctx context.Context, uri string) *View {
	v := &View{URI: uri}
	if !strings.HasPrefix(uri, "ui://") || len(uri) > 2048 {
		v.Error = "the view's address is not a ui:// URI"
		return v
	}
	raw, err := c.request(ctx, "resources/read", map[string]any{"uri": uri})
	if err != nil {
		v.Error = "the view could not be read: " + err.Error()
		return v
	}
	var res struct {
		Contents []struct {
			URI      string          `json:"uri"`
			MIMEType string          `json:"mimeType"`
			Text     *string         `json:"text"`
			Blob     *string         `json:"blob"`
			Meta     json.RawMessage `json:"_meta"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Contents) == 0 {
		v.Error = "the view's resource has no contents"
		return v
	}
	item := res.Contents[0]
	v.MIMEType = item.MIMEType
	if !strings.EqualFold(strings.ReplaceAll(item.MIMEType, " ", ""), AppMIMEType) {
		v.Error = fmt.Sprintf("the view's type is %q, not %s", cut(item.MIMEType, 80), AppMIMEType)
		return v
	}
	if item.Text == nil {
		v.Error = "the view is not text"
		return v
	}
	if len(*item.Text) > maxViewBytes {
		v.Error = fmt.Sprintf("the view is %d bytes, over the %d-byte limit", len(*item.Text), maxViewBytes)
		v.Bytes = len(*item.Text)
		return v
	}
	v.HTML, v.Bytes = *item.Text, len(*item.Text)
	sum := sha256.Sum256([]byte(v.HTML))
	v.SHA256 = hex.EncodeToString(sum[:])
	v.parseMeta(item.Meta)
	return v
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// parseMeta reads the resource's _meta.ui: csp (each entry checked), permissions, prefersBorder.
func (v *View) parseMeta(meta json.RawMessage) {
	var m struct {
		UI struct {
			CSP struct {
				Connect  []string `json:"connectDomains"`
				Resource []string `json:"resourceDomains"`
				Frame    []string `json:"frameDomains"`
				BaseURI  []string `json:"baseUriDomains"`
			} `json:"csp"`
			Permissions   map[string]json.RawMessage `json:"permissions"`
			PrefersBorder *bool                      `json:"prefersBorder"`
		} `json:"ui"`
	}
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil {
		return
	}
	v.CSP.ConnectDomains = v.origins(m.UI.CSP.Connect, true)
	v.CSP.ResourceDomains = v.origins(m.UI.CSP.Resource, false)
	v.CSP.FrameDomains = v.origins(m.UI.CSP.Frame, false)
	v.CSP.BaseURIDomains = v.origins(m.UI.CSP.BaseURI, false)
	_, v.Permissions.Camera = m.UI.Permissions["camera"]
	_, v.Permissions.Microphone = m.UI.Permissions["microphone"]
	_, v.Permissions.Geolocation = m.UI.Permissions["geolocation"]
	_, v.Permissions.ClipboardWrite = m.UI.Permissions["clipboardWrite"]
	v.PrefersBorder = m.UI.PrefersBorder
}

// origins keeps the entries that are plain origins, recording the others in Dropped.
func (v *View) origins(in []string, sockets bool) []string {
	var out []string
	for _, s := range in {
		o, ok := cspSource(s, sockets)
		if !ok || len(out) >= maxViewDomains {
			v.Dropped = append(v.Dropped, cut(s, 200))
			continue
		}
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// cspSource checks one declared origin and returns it as a CSP source expression: a scheme
// (https, http; wss and ws where sockets), a host (letters, digits, '-' and '.', or a leading
// "*." for subdomains) and an optional port, nothing else. A keyword ('self', 'unsafe-eval'), a
// bare "*", a scheme alone, a path, a quote, a space, a comma or a semicolon is refused: each
// would let the view reach more than an origin, or add a directive.
func cspSource(s string, sockets bool) (string, bool) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return "", false
	}
	scheme = strings.ToLower(scheme)
	switch scheme {
	case "https", "http":
	case "wss", "ws":
		if !sockets {
			return "", false
		}
	default:
		return "", false
	}
	rest = strings.TrimSuffix(rest, "/")
	host, port, hasPort := strings.Cut(rest, ":")
	if hasPort {
		if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return "", false
		}
	}
	wild := strings.HasPrefix(host, "*.")
	h := strings.TrimPrefix(host, "*.")
	if h == "" || len(h) > 253 || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		return "", false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return "", false
		}
	}
	if wild && !strings.Contains(h, ".") {
		return "", false // *.com: a whole top-level domain
	}
	u := url.URL{Scheme: scheme, Host: strings.ToLower(host)}
	if hasPort {
		u.Host += ":" + port
	}
	return u.String(), true
}

// canonicalUI is a tool's "ui" field in its pinned definition: what it declares and, for its
// view, everything that decides what the view does (the HTML by hash, the CSP, the permissions).
func canonicalUI(u *ToolUI) any {
	if u == nil {
		return nil
	}
	m := map[string]any{}
	if u.ResourceURI != "" {
		m["resourceUri"] = u.ResourceURI
	}
	if u.Visibility != nil {
		m["visibility"] = u.Visibility
	}
	if v := u.View; v != nil {
		b, _ := json.Marshal(v) // ignore error: plain types
		var vm any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		_ = dec.Decode(&vm) // ignore error: just marshalled
		m["view"] = vm
	}
	return m
}

// View returns the view of a registered tool, as read when its server's tools were listed:
// nil when the tool is unknown or declares none.
func (r *Registry) View(name string) (*ToolUI, bool) {
	t, ok := r.Lookup(name)
	if !ok || t.UI == nil {
		return nil, false
	}
	return t.UI, true
}
