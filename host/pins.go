package host

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
)

// Tool pinning (issue 13). Every MCP tool is pinned by the hash of its canonical form
// (mcpbridge.CanonicalTool) the first time its server is seen (a workspace server: the first time
// after the person trusted it). When the registry's tool list changes (connect, reconnect,
// tools/list_changed), the tools are compared with their pins once, and the result is kept for
// that tool list: a call costs one map lookup. Under the setting "enforce" a changed tool is held
// back: not offered to the model, and the gate refuses a call to it (by "pin") whatever the mode
// or the allowlist says; a tool new since its server was pinned asks before its first run even
// under a whole-server grant or always-allow. "warn" shows the change and blocks nothing; "off"
// compares nothing.

// The pinning setting's values.
const (
	PinningEnforce = "enforce" // the default
	PinningWarn    = "warn"
	PinningOff     = "off"
)

// ParsePinning checks a pinning setting ("" = enforce).
func ParsePinning(s string) (string, error) {
	switch s {
	case "":
		return PinningEnforce, nil
	case PinningEnforce, PinningWarn, PinningOff:
		return s, nil
	}
	return PinningEnforce, fmt.Errorf("pinning must be enforce, warn or off, not %q", s)
}

// Kinds of PinChange.
const (
	PinChanged = "changed"
	PinNew     = "new"
	PinRemoved = "removed"
)

// PinChange is one tool whose definition is not the pinned one.
type PinChange struct {
	Tool string // the server's own tool name
	Name string // registered name ("" for a removed tool)
	Kind string // PinChanged, PinNew, PinRemoved
	// Old is the pinned definition (nil for a new tool), New the current one (nil for a removed
	// tool), both canonical forms; Hash is New's hash.
	Old, New json.RawMessage
	Hash     string
}

// Diff is what changed, field by field, escaped for a person (mcpbridge.DiffDefinitions).
func (c PinChange) Diff() string { return safetext.Block(mcpbridge.DiffDefinitions(c.Old, c.New)) }

// ServerPinChanges are one server's tools that differ from their pins.
type ServerPinChanges struct {
	Server   string
	Key      string // its record in the pin file (config.ServerConfig.StateKey)
	Identity json.RawMessage
	Changes  []PinChange // by Tool
}

// Tools returns the tool names of kind k ("" = all).
func (s ServerPinChanges) Tools(k string) []string {
	var out []string
	for _, c := range s.Changes {
		if k == "" || c.Kind == k {
			out = append(out, c.Tool)
		}
	}
	return out
}

// PinReport is the state of the pins (switchboard.pins).
type PinReport struct {
	Pinning string
	File    string
	Problem string // the pin file's error: it then pins nothing
	Servers []ServerPinChanges
}

// LegacyPins returns the records of pins, keyed by config.ServerConfig.StateKey, that servers of ready a workspace file
// defines take over from before pins were kept per folder: a record under the bare name whose
// identity is the server's (the same command and arguments). The caller lays them over pins and
// writes them under their new key (permissions.PinStore.PinFirst), so the tools pinned before the
// upgrade stay pinned rather than being first seen again. The bare record is left as it was.
func LegacyPins(ready map[string]config.ServerConfig, pins map[string]permissions.ServerPins) map[string]permissions.ServerPins {
	var out map[string]permissions.ServerPins
	for name, cfg := range ready {
		if cfg.StateKey() == name {
			continue
		}
		if _, ok := pins[cfg.StateKey()]; ok {
			continue
		}
		sp, ok := pins[name]
		if !ok || !jsonEqual(sp.Identity, mcpbridge.ServerIdentity(cfg)) {
			continue
		}
		if out == nil {
			out = map[string]permissions.ServerPins{}
		}
		out[cfg.StateKey()] = sp
	}
	return out
}

// ComparePins compares tools (of the ready servers) with pins (the pin file's records, by
// config.ServerConfig.StateKey: a server from a repository keeps its own, under its name and
// folder, so one repository's server never reads, replaces or forgets another's pins). ready maps every ready server (one may have no tools) to its configuration. A ready
// server without any pin is first seen: its tools are returned in first (by server name), to pin,
// not as changes.
func ComparePins(tools []mcpbridge.Tool, ready map[string]config.ServerConfig, pins map[string]permissions.ServerPins) (changes []ServerPinChanges, first map[string][]mcpbridge.Tool) {
	byServer := map[string][]mcpbridge.Tool{}
	for _, t := range tools {
		if t.Hash != "" {
			byServer[t.Server] = append(byServer[t.Server], t)
		}
	}
	first = map[string][]mcpbridge.Tool{}
	names := make([]string, 0, len(ready))
	for n := range ready {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, server := range names {
		cfg := ready[server]
		if ts := byServer[server]; cfg.WorkspaceOnly && len(ts) > 0 && ts[0].Definition != cfg.Fingerprint() {
			// The tools are still those of the definition before (the window's folders or the
			// file changed, and the registry has not restarted the server yet): compared once
			// they are this definition's, never pinned under its key.
			continue
		}
		sp, pinned := pins[cfg.StateKey()]
		if !pinned {
			if len(byServer[server]) > 0 {
				first[server] = byServer[server]
			}
			continue
		}
		sc := ServerPinChanges{Server: server, Key: cfg.StateKey(), Identity: mcpbridge.ServerIdentity(cfg)}
		seen := map[string]bool{}
		for _, t := range byServer[server] {
			seen[t.Tool] = true
			pt, ok := sp.Tools[t.Tool]
			switch {
			case !ok:
				sc.Changes = append(sc.Changes, PinChange{Tool: t.Tool, Name: t.Name, Kind: PinNew, New: t.Canonical, Hash: t.Hash})
			case pt.Hash != t.Hash:
				sc.Changes = append(sc.Changes, PinChange{Tool: t.Tool, Name: t.Name, Kind: PinChanged, Old: pt.Definition, New: t.Canonical, Hash: t.Hash})
			}
		}
		for tool, pt := range sp.Tools {
			if !seen[tool] {
				sc.Changes = append(sc.Changes, PinChange{Tool: tool, Kind: PinRemoved, Old: pt.Definition})
			}
		}
		if len(sc.Changes) > 0 {
			slices.SortFunc(sc.Changes, func(x, y PinChange) int { return strings.Compare(x.Tool, y.Tool) })
			changes = append(changes, sc)
		}
	}
	return changes, first
}

// pinView is the comparison for one registry tool list and one state of the pin file.
type pinView struct {
	src     *mcpbridge.ToolSet // the registry's snapshot it was made from
	gen     uint64             // pinState.gen it was made at
	pinning string
	snap    *mcpbridge.ToolSet          // src with Held set on changed tools (src itself when none)
	byName  map[string]PinChange        // changed and new tools by registered name
	servers []ServerPinChanges          // every server with changes
	broken  error                       // the pin file's error
	shown   map[string]ServerPinChanges // by server
}

// pinState is the App's pinning state.
type pinState struct {
	view atomic.Pointer[pinView]
	gen  atomic.Uint64 // bumped when the pins change (accept, trust)

	mu     sync.Mutex           // guards asked, review; serialises rebuilds
	asked  map[string]string    // server -> signature of the changes last shown
	review map[string]*Question // server -> its pending review question

	// First-seen pins are written by one goroutine at a time, in the order they were seen, off the
	// path of the call that noticed them (the write, with its fsync, took a millisecond of the first
	// call after a start). Until a write is done its pins are in queued, and every comparison reads
	// them over the file's: a definition that changes before the write lands (another process
	// holding the pin file's lock, a slow disk) is a change, held for review, never "first seen"
	// again. A crash before the write only means the server is first seen at the next start.
	writeMu sync.Mutex
	written *sync.Cond // on writeMu: broadcast when the writer has emptied the queue
	writes  []func()
	writing bool
	queued  map[string]queuedPins // StateKey -> pins waiting for their write
	seq     uint64                // numbers queuedPins
}

type queuedPins struct {
	pins permissions.ServerPins
	seq  uint64
}

// loadPins reads the pin file and lays the pins waiting for their write over it. The read and the
// overlay are one step against the writer, which drops a server from queued only after its write:
// a server is in the file or in queued, never in neither.
func (a *App) loadPins() (map[string]permissions.ServerPins, error) {
	a.pins.writeMu.Lock()
	defer a.pins.writeMu.Unlock()
	pins, err := a.pinStore.Load()
	if err != nil {
		return pins, err
	}
	for key, q := range a.pins.queued {
		if _, ok := pins[key]; !ok { // the file's record, once there, wins (as PinFirst does)
			pins[key] = q.pins
		}
	}
	return pins, nil
}

// pinFirstSeen records a server's first-seen tools at once (for the comparisons) and queues their
// write to the pin file.
func (a *App) pinFirstSeen(cfg config.ServerConfig, tools []mcpbridge.Tool) {
	m := make(map[string]permissions.PinnedTool, len(tools))
	for _, t := range tools {
		m[t.Tool] = permissions.PinnedTool{Hash: t.Hash, Definition: t.Canonical}
	}
	a.queuePins(cfg.StateKey(), permissions.ServerPins{Identity: mcpbridge.ServerIdentity(cfg), Tools: m},
		fmt.Sprintf("pinned %d tool(s) of MCP server %q (first seen)", len(m), cfg.Name))
}

// queuePins records pins under key at once (for the comparisons) and queues their write to the
// pin file as first-seen pins (PinFirst: a record there by then wins); done is logged once written.
func (a *App) queuePins(key string, sp permissions.ServerPins, done string) {
	a.pins.writeMu.Lock()
	if a.pins.queued == nil {
		a.pins.queued = map[string]queuedPins{}
	}
	a.pins.seq++
	seq := a.pins.seq
	a.pins.queued[key] = queuedPins{pins: sp, seq: seq}
	a.pins.writeMu.Unlock()
	a.pinLater(func() {
		a.pins.writeMu.Lock()
		q, ok := a.pins.queued[key]
		a.pins.writeMu.Unlock()
		if !ok || q.seq != seq {
			return // dropped (forgetPinsOnTrust), or queued again: that write goes instead
		}
		if err := a.pinStore.PinFirst(key, sp.Identity, sp.Tools); err != nil {
			a.log.Warn(fmt.Sprintf("host: pinning the tools of %s: %v", key, err))
			return // the pins stay in queued, so this host keeps holding changes to them
		}
		a.log.Info("host: " + done)
		a.pins.writeMu.Lock()
		if q, ok := a.pins.queued[key]; ok && q.seq == seq {
			delete(a.pins.queued, key) // on disk now: the file is the truth
		}
		a.pins.writeMu.Unlock()
	})
}

// flushPins waits until the queued first-seen pin writes are on disk.
func (a *App) flushPins() {
	a.pins.writeMu.Lock()
	defer a.pins.writeMu.Unlock()
	for a.pins.writing {
		if a.pins.written == nil {
			a.pins.written = sync.NewCond(&a.pins.writeMu)
		}
		a.pins.written.Wait()
	}
}

// pinLater queues a first-seen pin write (see pinState).
func (a *App) pinLater(write func()) {
	a.pins.writeMu.Lock()
	a.pins.writes = append(a.pins.writes, write)
	if a.pins.writing {
		a.pins.writeMu.Unlock()
		return
	}
	a.pins.writing = true
	a.pins.writeMu.Unlock()
	a.goBg(func() {
		for {
			a.pins.writeMu.Lock()
			if len(a.pins.writes) == 0 {
				a.pins.writing = false
				if a.pins.written != nil {
					a.pins.written.Broadcast()
				}
				a.pins.writeMu.Unlock()
				return
			}
			w := a.pins.writes[0]
			a.pins.writes = a.pins.writes[1:]
			a.pins.writeMu.Unlock()
			w()
		}
	})
}

func (a *App) pinning() string {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	p, _ := ParsePinning(a.settings.Pinning) // ignore error: checked by the front end
	return policyPinning(a.Policy(), p)
}

// currentPins returns the comparison for the current tool list, made once per list.
func (a *App) currentPins() *pinView {
	src := a.registry.Snapshot()
	if v := a.pins.view.Load(); v != nil && v.src == src && v.gen == a.pins.gen.Load() && v.pinning == a.pinning() {
		return v
	}
	a.pins.mu.Lock()
	defer a.pins.mu.Unlock()
	return a.rebuildPinsLocked(src)
}

func (a *App) rebuildPinsLocked(src *mcpbridge.ToolSet) *pinView {
	gen, pinning := a.pins.gen.Load(), a.pinning()
	if v := a.pins.view.Load(); v != nil && v.src == src && v.gen == gen && v.pinning == pinning {
		return v
	}
	v := &pinView{src: src, gen: gen, pinning: pinning, snap: src, byName: map[string]PinChange{}, shown: map[string]ServerPinChanges{}}
	if pinning == PinningOff {
		v.snap = a.policyTools(v.snap)
		a.pins.view.Store(v)
		return v
	}
	ready := map[string]config.ServerConfig{}
	for _, st := range a.registry.Servers() {
		if st.State != mcpbridge.StateReady {
			continue
		}
		if cfg, ok := a.configFor(st.Name); ok {
			ready[st.Name] = cfg
		}
	}
	pins, err := a.loadPins()
	v.broken = err
	if err != nil {
		// A broken pin file grants nothing: every tool counts as changed.
		for _, t := range src.All() {
			v.byName[t.Name] = PinChange{Tool: t.Tool, Name: t.Name, Kind: PinChanged, New: t.Canonical, Hash: t.Hash}
		}
	} else {
		for key, sp := range LegacyPins(ready, pins) {
			pins[key] = sp
			name, folder, _ := strings.Cut(key, "@")
			a.queuePins(key, sp, fmt.Sprintf("kept the pins of MCP server %q for its folder %s", name, folder))
		}
		changes, first := ComparePins(src.All(), ready, pins)
		for server, tools := range first {
			a.pinFirstSeen(ready[server], tools)
		}
		v.servers = changes
		for _, sc := range changes {
			v.shown[sc.Server] = sc
			for _, c := range sc.Changes {
				if c.Name != "" {
					v.byName[c.Name] = c
				}
			}
		}
	}
	if pinning == PinningEnforce {
		held := false
		tools := slices.Clone(src.All())
		for i, t := range tools {
			if c, ok := v.byName[t.Name]; ok && c.Kind == PinChanged {
				tools[i].Held, held = true, true
			}
		}
		if held {
			v.snap = mcpbridge.NewToolSet(tools)
		}
	}
	v.snap = a.policyTools(v.snap)
	a.pins.view.Store(v)
	return v
}

// heldText is the refusal of a held call, for the model and the person.
func heldText(server, tool string) string {
	return fmt.Sprintf("the definition of tool %s of MCP server %s changed since you approved it; review it with "+
		"the command Switchboard: Review Tool Changes (switchboard.pins) or `switchboard pins diff %s`, then accept it",
		tool, server, server)
}

// pinVerdict is the gate's Pins: one map lookup in the comparison of the current tool list.
func (a *App) pinVerdict(req permissions.Request) permissions.PinVerdict {
	v := a.currentPins()
	if v.pinning == PinningOff {
		return permissions.PinVerdict{}
	}
	c, ok := v.byName[req.Tool]
	if !ok {
		return permissions.PinVerdict{}
	}
	if v.broken != nil {
		msg := fmt.Sprintf("the pin file %s has an error (%v): fix or remove it", a.pinStore.Path(), v.broken)
		if v.pinning == PinningWarn {
			return permissions.PinVerdict{Note: "not checked against its pin: " + msg}
		}
		return permissions.PinVerdict{Hold: true, Reason: msg}
	}
	switch {
	case c.Kind == PinChanged && v.pinning == PinningEnforce:
		return permissions.PinVerdict{Hold: true, Reason: heldText(req.Server, c.Tool)}
	case c.Kind == PinChanged:
		return permissions.PinVerdict{Note: "its definition changed since you approved it (pinning is warn)"}
	case c.Kind == PinNew && v.pinning == PinningEnforce:
		// The closure captures the server alone, not req: a captured req (too big to copy into
		// it) would move to the heap on every call, this rare one or not.
		server := req.Server
		return permissions.PinVerdict{Ask: true,
			Reason: fmt.Sprintf("tool %s is new since server %s was approved", c.Tool, server),
			Approved: func() {
				sc := v.shown[server]
				a.acceptChanges(ServerPinChanges{Server: server, Key: sc.Key, Identity: sc.Identity, Changes: []PinChange{c}}, "first run allowed by the user")
			}}
	case c.Kind == PinNew:
		return permissions.PinVerdict{Note: "the tool is new since its server was approved (pinning is warn)"}
	}
	return permissions.PinVerdict{}
}

// held reports whether a call to name must be refused now (the registry's list may have changed
// since the gate looked).
func (a *App) held(name string) (string, bool) {
	v := a.currentPins()
	if v.pinning != PinningEnforce {
		return "", false
	}
	c, ok := v.byName[name]
	if !ok || c.Kind != PinChanged {
		return "", false
	}
	t, _ := v.src.Lookup(name)
	return heldText(t.Server, c.Tool), true
}

// acceptChanges pins what the person accepted: exactly the definitions in sc (what was shown),
// and forgets the pins of removed tools. Each accepted tool is audited (by "pin").
func (a *App) acceptChanges(sc ServerPinChanges, why string) error {
	pin := map[string]permissions.PinnedTool{}
	var removed []string
	for _, c := range sc.Changes {
		if c.Kind == PinRemoved {
			removed = append(removed, c.Tool)
			continue
		}
		pin[c.Tool] = permissions.PinnedTool{Hash: c.Hash, Definition: c.New}
	}
	if len(pin) > 0 {
		if err := a.pinStore.Pin(sc.Key, sc.Identity, pin); err != nil {
			return fmt.Errorf("host: pins: %w", err)
		}
	}
	if len(removed) > 0 {
		if err := a.pinStore.Unpin(sc.Key, removed...); err != nil {
			return fmt.Errorf("host: pins: %w", err)
		}
	}
	for _, c := range sc.Changes {
		name := c.Name
		if name == "" {
			name = mcpbridge.ToolName(sc.Server, c.Tool)
		}
		a.audit.Record(permissions.Request{Tool: name, Server: sc.Server}, permissions.Decision{
			Allowed: c.Kind != PinRemoved, By: permissions.ByPin, Reason: fmt.Sprintf("%s definition accepted: %s", c.Kind, why)}, 0)
	}
	a.events.record("pinsAccepted", map[string]any{"server": sc.Server, "tools": sc.Tools(""), "by": why})
	a.pins.gen.Add(1)
	return nil
}

// Pins reports every server's tools that differ from their pins (switchboard.pins), or one
// server's ("" = all).
func (a *App) Pins(server string) (PinReport, error) {
	if server != "" && !a.knownServer(server) {
		return PinReport{}, badRequest("unknown server %q", server)
	}
	a.pins.gen.Add(1) // re-read the file: another process may have accepted
	v := a.currentPins()
	// Then wait for the writes, the first-seen pins this comparison queued included: the file
	// holds what this host has seen when the answer arrives (but for a write that failed: its
	// pins stay queued in memory, and it was logged).
	a.flushPins()
	r := PinReport{Pinning: v.pinning, File: a.pinStore.Path(), Servers: []ServerPinChanges{}}
	if v.broken != nil {
		r.Problem = safetext.Line(v.broken.Error())
	}
	for _, sc := range v.servers {
		if server == "" || sc.Server == server {
			r.Servers = append(r.Servers, sc)
		}
	}
	return r, nil
}

// AcceptPins accepts the current definitions of tools of server (none = every changed, new and
// removed tool of it): they are pinned as they are now, and held tools run again
// (switchboard.pins.accept). It returns what still differs for that server.
func (a *App) AcceptPins(server string, tools []string) (PinReport, error) {
	if server == "" {
		return PinReport{}, badRequest("server is required")
	}
	rep, err := a.Pins(server)
	if err != nil {
		return PinReport{}, err
	}
	if rep.Problem != "" {
		return PinReport{}, badRequest("the pin file %s has an error (%s): fix or remove it first", rep.File, rep.Problem)
	}
	var sc ServerPinChanges
	for _, s := range rep.Servers {
		sc = s
	}
	if len(tools) > 0 {
		var keep []PinChange
		for _, t := range tools {
			i := slices.IndexFunc(sc.Changes, func(c PinChange) bool { return c.Tool == t || c.Name == t })
			if i < 0 {
				return PinReport{}, badRequest("tool %q of server %q has no change to accept", t, server)
			}
			keep = append(keep, sc.Changes[i])
		}
		sc.Changes = keep
	}
	if len(sc.Changes) > 0 {
		if err := a.acceptChanges(sc, "accepted by the user"); err != nil {
			return PinReport{}, err
		}
	}
	a.pinsChanged()
	return a.Pins(server)
}

// pinsChanged shows each server's new changes once: a question (Review / Accept all / Keep
// blocked) for changed tools, a notice for new and removed ones. A review still open for a
// server whose changes differ now is withdrawn first. Called after every tool-list change.
func (a *App) pinsChanged() {
	v := a.currentPins()
	if v.pinning == PinningOff {
		return
	}
	a.pins.mu.Lock()
	defer a.pins.mu.Unlock()
	if a.pins.asked == nil {
		a.pins.asked, a.pins.review = map[string]string{}, map[string]*Question{}
	}
	if v.broken != nil {
		sig := "broken\x00" + v.broken.Error()
		if a.pins.asked[""] != sig {
			a.pins.asked[""] = sig
			a.ui.Notify(LevelError, fmt.Sprintf("Switchboard: the pin file %s has an error, so no MCP tool counts as approved: fix or remove it.", safetext.Line(a.pinStore.Path())))
		}
		return
	}
	delete(a.pins.asked, "")
	seen := map[string]bool{}
	for _, sc := range v.servers {
		seen[sc.Server] = true
		var sig strings.Builder
		for _, c := range sc.Changes {
			fmt.Fprintf(&sig, "%s\x00%s\x00%s\n", c.Kind, c.Tool, c.Hash)
		}
		if a.pins.asked[sc.Server] == sig.String() {
			continue
		}
		a.pins.asked[sc.Server] = sig.String()
		if q := a.pins.review[sc.Server]; q != nil {
			delete(a.pins.review, sc.Server)
			q.Dismiss()
		}
		a.showPinChanges(sc, v.pinning)
	}
	for server, q := range a.pins.review {
		if !seen[server] { // accepted or gone
			delete(a.pins.review, server)
			q.Dismiss()
		}
	}
	for server := range a.pins.asked {
		if !seen[server] {
			delete(a.pins.asked, server)
		}
	}
}

// showPinChanges tells the person about one server's changes. Called with pins.mu held.
func (a *App) showPinChanges(sc ServerPinChanges, pinning string) {
	name := safetext.Line(sc.Server)
	list := func(tools []string) string {
		for i, t := range tools {
			tools[i] = safetext.Line(t)
		}
		return strings.Join(tools, ", ")
	}
	var notes []string
	if n := sc.Tools(PinNew); len(n) > 0 {
		notes = append(notes, fmt.Sprintf("added tool(s) %s (each asks before its first run)", list(n)))
	}
	if r := sc.Tools(PinRemoved); len(r) > 0 {
		notes = append(notes, fmt.Sprintf("no longer offers %s", list(r)))
	}
	changed := sc.Tools(PinChanged)
	if len(changed) == 0 {
		a.ui.Notify(LevelInfo, fmt.Sprintf("Switchboard: MCP server '%s' %s.", name, strings.Join(notes, " and ")))
		return
	}
	text := fmt.Sprintf("MCP server '%s' changed the definition of %s since you approved it; ", name, list(changed))
	if pinning == PinningEnforce {
		text += "held back until you review it."
	} else {
		text += "it still runs (pinning is warn)."
	}
	if len(notes) > 0 {
		text += " It also " + strings.Join(notes, " and ") + "."
	}
	q := a.questions.open(KindPin, 0, func(q *Question) {
		q.Text = text
		q.Pins = sc
	})
	a.pins.review[sc.Server] = q
	a.ui.Ask(q)
	go func() {
		o := q.wait(a.baseCtx, a.gone)
		if o.By != ByUser || !o.Reply.Allow {
			return // kept blocked: switchboard.pins.accept can still accept
		}
		if err := a.acceptChanges(q.Pins, "accepted by the user in the review"); err != nil {
			a.ui.Notify(LevelError, "Switchboard: "+safetext.Line(err.Error()))
			return
		}
		a.pinsChanged()
	}()
}

// forgetPinsOnTrust drops a workspace server's pins when the person trusts a definition that runs
// something else than the pinned one: its tools are pinned at the first connection after trust.
func (a *App) forgetPinsOnTrust(cfg config.ServerConfig) {
	// First-seen pins of the definition before, still waiting for their write, go too: written
	// after the file's record is dropped, they would be this definition's pins.
	id := mcpbridge.ServerIdentity(cfg)
	a.pins.writeMu.Lock()
	if q, ok := a.pins.queued[cfg.StateKey()]; ok && !jsonEqual(q.pins.Identity, id) {
		delete(a.pins.queued, cfg.StateKey())
		a.pins.gen.Add(1)
	}
	a.pins.writeMu.Unlock()
	a.flushPins() // a write already under way ends before the record is looked at
	pins, err := a.pinStore.Load()
	if err != nil {
		return
	}
	sp, ok := pins[cfg.StateKey()]
	if !ok || jsonEqual(sp.Identity, id) {
		return
	}
	if err := a.pinStore.Unpin(cfg.StateKey()); err != nil {
		a.log.Warn(fmt.Sprintf("host: pins of %s: %v", cfg.Name, err))
	}
	a.pins.gen.Add(1)
}

func jsonEqual(x, y json.RawMessage) bool {
	var a, b any
	if json.Unmarshal(x, &a) != nil || json.Unmarshal(y, &b) != nil {
		return false
	}
	ja, _ := json.Marshal(a) // ignore error: decoded values
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
