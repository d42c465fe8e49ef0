package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/oauth"
)

// Protocol eras (issue 29). A server entry's "protocol" is ProtocolAuto (the default),
// ProtocolLegacy or ProtocolModern.
//
// Legacy is the initialize handshake (2025-11-25 and earlier). Modern (2026-07-28) has no
// handshake: every request carries the protocol version, client info and client capabilities in
// its _meta, server/discover tells the server's capabilities, the server asks for input by
// multi round-trip results (mrtr.go) and sends its news on subscriptions/listen (listen.go).
//
// In auto, the era is found per server:
//   - stdio: initialize first, so that a legacy server (the most common, and some ignore unknown
//     methods, which would cost a probe's whole timeout) is ready as fast as without eras. Any
//     JSON-RPC error answering initialize means the server is alive and is not a legacy one:
//     then server/discover decides (a modern-only server answers initialize with -32022
//     UnsupportedProtocolVersion naming 2026-07-28, or -32601 method not found, or some other
//     error: the spec leaves the code to the server). If discover fails too, the initialize error
//     is the reason shown.
//   - http: server/discover first (an HTTP server's refusal comes back at once), then
//     initialize on any answer that is not a modern one.
//
// The era found is remembered per server definition (EraStore, beside the pins) and tried first
// at the next start; when the server no longer answers in it, auto runs again. An era written in
// the entry is used alone, never remembered nor re-learnt.
const (
	ProtocolAuto   = config.ProtocolAuto
	ProtocolLegacy = config.ProtocolLegacy
	ProtocolModern = config.ProtocolModern
)

// discoverProbe bounds a server/discover sent to a stdio server that was modern at its last start
// and may be a legacy one now that ignores the method (then auto runs).
const discoverProbe = 5 * time.Second

// isModern: the connection speaks 2026-07-28.
func (c *conn) isModern() bool { return c.era == ProtocolModern }

// negotiate runs the handshake in the era plan says and learns the era (c.era, c.learnt).
func (c *conn) negotiate(ctx context.Context, plan eraPlan) error {
	_, isHTTP := c.tr.(transport.HTTPConnection)
	isSSE := c.cfg.Transport == config.TransportSSE
	switch {
	case plan.fixed == ProtocolLegacy || isSSE:
		return c.initLegacy(ctx)
	case plan.fixed == ProtocolModern:
		return c.discover(ctx)
	case plan.remembered == ProtocolModern || isHTTP && plan.remembered == "":
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if !isHTTP {
			pctx, cancel = context.WithTimeout(ctx, discoverProbe)
		}
		err := c.discover(pctx)
		cancel()
		if err == nil || ctx.Err() != nil || isModernError(err) {
			return err
		}
		c.relearnt = plan.remembered != ""
		if lerr := c.initLegacy(ctx); lerr != nil {
			return fmt.Errorf("%w (%v)", lerr, err) // err says server/discover already
		}
		return nil
	}
	// stdio (or in-process) in auto, or a server that was legacy at its last start.
	lerr := c.initLegacy(ctx)
	if lerr == nil || !answered(lerr) || ctx.Err() != nil {
		return lerr
	}
	if err := c.discover(ctx); err != nil {
		return lerr
	}
	c.relearnt = plan.remembered != ""
	return nil
}

// answered: err is the server's JSON-RPC error answer (it is alive and chose to refuse), not a
// transport failure. An HTTP server that refuses initialize with a 4xx is such an answer too.
func answered(err error) bool {
	var te *transport.Error
	if errors.Is(err, transport.ErrLegacySSEServer) {
		return true
	}
	return !errors.As(err, &te) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) &&
		!errors.Is(err, transport.ErrTransportClosed)
}

// isModernError: err is a modern JSON-RPC error that a legacy server would not send (the server
// is modern and refused for another reason: falling back would hide it).
func isModernError(err error) bool {
	return mcp.IsHeaderMismatch(err) || mcp.IsMissingRequiredClientCapability(err)
}

// initLegacy is the initialize handshake (mcp-go's, pinned to 2025-11-25: no discover probe).
func (c *conn) initLegacy(ctx context.Context) error {
	if h, ok := c.tr.(transport.HTTPConnection); ok {
		h.SetProtocolVersion("") // a failed discover set it
	}
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = ProtocolLegacy
	req.Params.ClientInfo = mcp.Implementation{Name: "switchboard", Version: clientVersion}
	res, err := c.client.Initialize(ctx, req)
	if err != nil {
		return fmt.Errorf("initialize: %w", oauth.PlainHTTPError(err))
	}
	c.era = ProtocolLegacy
	c.instructions = res.Instructions
	c.caps = res.Capabilities
	return nil
}

// discover is server/discover in the modern era; it fails unless the server supports 2026-07-28.
func (c *conn) discover(ctx context.Context) error {
	c.era = ProtocolModern
	if h, ok := c.tr.(transport.HTTPConnection); ok {
		h.SetProtocolVersion(ProtocolModern) // Mcp-Protocol-Version on every request
	}
	raw, err := c.request(ctx, string(mcp.MethodServerDiscover), nil)
	var unsupported mcp.UnsupportedProtocolVersionError
	if errors.As(err, &unsupported) && slices.Contains(unsupported.Supported, ProtocolModern) {
		// A refusal that names our version among the supported ones (a server that wants the
		// version chosen again, or one behind a balancer that answered for another replica):
		// ask once more, with a new id; a second refusal stands.
		raw, err = c.request(ctx, string(mcp.MethodServerDiscover), nil)
	}
	if err == nil {
		var res mcp.DiscoverResult
		if err = json.Unmarshal(raw, &res); err == nil {
			supported := false
			for _, v := range res.SupportedVersions {
				supported = supported || v == ProtocolModern
			}
			if supported {
				c.instructions = res.Instructions
				c.caps = res.Capabilities
				return nil
			}
			err = fmt.Errorf("server supports %q, not %s", res.SupportedVersions, ProtocolModern)
		}
	}
	c.era = ""
	return fmt.Errorf("server/discover: %w", oauth.PlainHTTPError(err))
}

// eraPlan is what the handshake tries: fixed, the entry's era ("" = auto); remembered, the era
// of the last start in auto ("" = none).
type eraPlan struct {
	fixed, remembered string
}

// planFor is the handshake plan of cfg.
func (r *Registry) planFor(cfg config.ServerConfig) eraPlan {
	if cfg.Protocol != "" && cfg.Protocol != ProtocolAuto {
		return eraPlan{fixed: cfg.Protocol}
	}
	return eraPlan{remembered: r.opts.Eras.Get(cfg.Fingerprint())}
}

// learnt records the era a server answered in (auto only). The store holds it at once; the file
// is written in the background (Close waits for it): the write (a lock file, a temporary file, a
// rename) used to sit between the server's tools/list and its being ready, in the path of a
// host's first call.
func (r *Registry) learnt(cfg config.ServerConfig, plan eraPlan, era string) {
	if plan.fixed != "" || era == "" || era == plan.remembered || r.opts.Eras == nil {
		return
	}
	fp := cfg.Fingerprint()
	r.opts.Eras.remember(fp, cfg.Name, era)
	r.wg.Go(r.opts.Eras.write)
}

// clientMeta is the _meta object of every modern request: protocol version, client info and the
// client's capabilities (what the registry's options let it answer).
func (r *Registry) clientMeta() json.RawMessage {
	caps := map[string]any{}
	if r.opts.Roots != nil {
		caps["roots"] = map[string]any{}
	}
	if r.opts.Sample != nil {
		caps["sampling"] = map[string]any{}
	}
	if r.opts.Elicit != nil {
		caps["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
	}
	// The tasks extension (tasks.go): a server may answer any tools/call with a task. MCP Apps
	// (apps.go): the host shows views.
	caps["extensions"] = map[string]any{TaskExtension: map[string]any{}, AppsExtension: map[string]any{"mimeTypes": []string{AppMIMEType}}}
	b, _ := json.Marshal(map[string]any{ // ignore error: plain values
		mcp.MetaKeyProtocolVersion:    ProtocolModern,
		mcp.MetaKeyClientInfo:         mcp.Implementation{Name: "switchboard", Version: clientVersion},
		mcp.MetaKeyClientCapabilities: caps,
	})
	return b
}

// decorate gives a modern request its _meta (merged into what params already has) and, over
// HTTP, the standard headers (Mcp-Method, Mcp-Name, Mcp-Param-*). Legacy requests pass as they are.
func (c *conn) decorate(req *transport.JSONRPCRequest) error {
	if !c.isModern() {
		return nil
	}
	params, err := withMeta(req.Params, c.meta)
	if err != nil {
		return err
	}
	req.Params = params
	if _, ok := c.tr.(transport.HTTPConnection); ok {
		req.Header = c.standardHeaders(req.Method, params)
	}
	return nil
}

// withMeta returns params (any JSON object, or nil) as JSON with meta's keys in its _meta.
func withMeta(params any, meta json.RawMessage) (json.RawMessage, error) {
	var b []byte
	switch p := params.(type) {
	case nil:
		b = []byte("{}")
	case json.RawMessage:
		b = p
	default:
		var err error
		if b, err = json.Marshal(p); err != nil {
			return nil, err
		}
	}
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' {
		return nil, errors.New("params must be a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	if old, ok := fields["_meta"]; ok {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(old, &m); err != nil {
			return nil, fmt.Errorf("_meta: %w", err)
		}
		var add map[string]json.RawMessage
		_ = json.Unmarshal(meta, &add) // ignore error: ours
		for k, v := range add {
			m[k] = v
		}
		merged, _ := json.Marshal(m) // ignore error: raw values
		fields["_meta"] = merged
		return json.Marshal(fields)
	}
	out := make([]byte, 0, len(b)+len(meta)+10)
	out = append(out, `{"_meta":`...)
	out = append(out, meta...)
	if rest := bytes.TrimSpace(b[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// standardHeaders are the HTTP headers of a modern request (SEP-2243): Mcp-Method, Mcp-Name for
// tools/call, prompts/get and resources/read, and the Mcp-Param-* headers of a tool whose input
// schema marks parameters with x-mcp-header.
func (c *conn) standardHeaders(method string, params json.RawMessage) http.Header {
	h := http.Header{}
	for k, v := range mcp.StandardHeaders(ProtocolModern, mcp.MCPMethod(method), params) {
		h.Set(k, v)
	}
	if method == string(mcp.MethodToolsCall) {
		c.headerToolsMu.RLock()
		tools := c.headerTools
		c.headerToolsMu.RUnlock()
		if len(tools) > 0 {
			var call struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(params, &call) == nil {
				if t, ok := tools[call.Name]; ok {
					for k, v := range mcp.GenerateParamHeaders(t, params) {
						h.Set(k, v)
					}
				}
			}
		}
	}
	return h
}

// paramHeaderTools keeps, over modern HTTP, the tools whose schema names x-mcp-header parameters
// (their calls carry them as headers) and drops those whose annotations are invalid, as the
// revision requires of a client; other connections keep every tool.
func (c *conn) paramHeaderTools(tools []wireTool) []wireTool {
	if !c.isModern() {
		return tools
	}
	if _, ok := c.tr.(transport.HTTPConnection); !ok {
		return tools
	}
	keep := tools[:0:0]
	with := map[string]*mcp.Tool{}
	for _, t := range tools {
		if !bytes.Contains(t.InputSchema, []byte("x-mcp-header")) {
			keep = append(keep, t)
			continue
		}
		mt := &mcp.Tool{Name: t.Name, RawInputSchema: t.InputSchema}
		if err := mcp.ValidateParamHeaderAnnotations(mt); err != nil {
			c.log.Warn("mcp tool dropped: invalid x-mcp-header annotation", "tool", t.Name, "err", err)
			continue
		}
		if len(mcp.ExtractParamHeaderBindings(mt)) > 0 {
			with[t.Name] = mt
		}
		keep = append(keep, t)
	}
	c.headerToolsMu.Lock()
	c.headerTools = with
	c.headerToolsMu.Unlock()
	return keep
}

// callHeaders are the standard headers of a tools/call of tool over modern HTTP (nil otherwise);
// params is the request's params.
func (c *conn) callHeaders(tool string, params []byte) http.Header {
	if !c.isModern() {
		return nil
	}
	if _, ok := c.tr.(transport.HTTPConnection); !ok {
		return nil
	}
	h := http.Header{}
	h.Set(mcp.HeaderMethod, string(mcp.MethodToolsCall))
	if v, ok := mcp.EncodeHeaderValue(tool); ok {
		h.Set(mcp.HeaderName, v)
	}
	c.headerToolsMu.RLock()
	t, ok := c.headerTools[tool]
	c.headerToolsMu.RUnlock()
	if ok {
		for k, v := range mcp.GenerateParamHeaders(t, params) {
			h.Set(k, v)
		}
	}
	return h
}

// appendMetaKeys appends the client's _meta members (without braces) for the hand-written
// tools/call; nothing in the legacy era.
func (c *conn) appendMetaKeys(buf []byte) []byte {
	if !c.isModern() || len(c.meta) < 2 {
		return buf
	}
	return append(buf, c.meta[1:len(c.meta)-1]...)
}

// EraStore remembers the era each server definition answered in (by config.ServerConfig.Fingerprint),
// in a JSON file beside the pins. It is safe for concurrent use; a nil *EraStore remembers
// nothing. A lost write (two hosts writing at once) costs only an auto handshake at the next start.
type EraStore struct {
	path string

	// mu guards m, loaded and pending.
	mu      sync.Mutex
	m       map[string]eraRecord
	loaded  bool
	pending map[string]eraRecord // remembered, not yet written
}

type eraRecord struct {
	Server string `json:"server"` // for a person reading the file
	Era    string `json:"era"`
}

// DefaultErasFile is the era file's name, in the directory of the pin file.
const DefaultErasFile = "eras.json"

// OpenEraStore returns the store of path; the file is read at the first Get.
func OpenEraStore(path string) *EraStore { return &EraStore{path: path} }

func (s *EraStore) loadLocked() {
	if s.loaded {
		return
	}
	s.loaded = true
	s.m = map[string]eraRecord{}
	b, err := os.ReadFile(s.path)
	if err != nil {
		return
	}
	var f struct {
		Servers map[string]eraRecord `json:"servers"`
	}
	if json.Unmarshal(b, &f) != nil {
		return // a damaged file: auto for every server, then rewritten
	}
	for k, v := range f.Servers {
		if v.Era == ProtocolLegacy || v.Era == ProtocolModern {
			s.m[k] = v
		}
	}
}

// Get is the era remembered for fingerprint ("" = none).
func (s *EraStore) Get(fingerprint string) string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loadLocked()
	return s.m[fingerprint].Era
}

// Set remembers era for fingerprint and writes the file (atomically: temp file and rename).
func (s *EraStore) Set(fingerprint, server, era string) {
	if s == nil {
		return
	}
	s.remember(fingerprint, server, era)
	s.write()
}

// remember is Set without the file: Get answers era from now on.
func (s *EraStore) remember(fingerprint, server, era string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loadLocked()
	s.m[fingerprint] = eraRecord{Server: server, Era: era}
	if s.pending == nil {
		s.pending = map[string]eraRecord{}
	}
	s.pending[fingerprint] = s.m[fingerprint]
}

// write is Set's file: what the file holds now, with every era remembered since the last write
// (the latest for each server, whichever order writes run in).
func (s *EraStore) write() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return
	}
	// Every window's host writes this file: under the lock, what another one wrote since this
	// one read it is read again and kept (the last writer would otherwise drop it).
	lock := flock.New(s.path + ".lock")
	if err := lock.Lock(); err == nil {
		defer lock.Unlock() // ignore error: closing the descriptor releases it anyway
		s.loaded = false
	}
	s.loadLocked()
	maps.Copy(s.m, s.pending)
	clear(s.pending)
	b, _ := json.MarshalIndent(struct { // ignore error: plain values
		Servers map[string]eraRecord `json:"servers"`
	}{s.m}, "", "  ")
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".eras-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), s.path) != nil {
		os.Remove(tmp.Name()) // ignore error: best effort
	}
}
