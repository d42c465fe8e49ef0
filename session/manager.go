package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session/llm"
)

// Options configures a Manager. Zero values are useful defaults.
type Options struct {
	Tools     Tools
	Gate      Gate      // nil = every call is denied (fail closed)
	Workspace Workspace // nil = built-in tools that need it report an error result
	Provider  ProviderConfig
	Logger    *slog.Logger
	Warn      func(msg string) // user-visible warning (host sends window/showMessage)
	MaxSteps  int              // model calls with tools per turn; default 25
	// ResultTokens is the context budget of one tool result in tokens (~4 bytes each); default 2000.
	ResultTokens int
	Getenv       func(string) string // nil = os.Getenv (API keys)
	// HTTPClient is used by the HTTP providers; nil = a default client.
	HTTPClient *http.Client
	// MaxConversations bounds the conversations kept in memory; past it the least recently used
	// idle one is forgotten (continuing it starts afresh). Default 64.
	MaxConversations int
	// Forgotten, when set, is told each conversation forgotten as least recently used (after
	// Start, outside the Manager's lock): what others keep for it ends too. End is not reported.
	Forgotten func(conversation string)
	// ToolSearch configures tool search for large tool sets (default: on above 40 tools).
	ToolSearch ToolSearchOptions
}

// ErrBusy is returned by Start when the conversation already runs a turn.
var ErrBusy = errors.New("session: conversation busy")

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("session: manager closed")

// ErrNoConversation is returned by Start with StartParams.Existing for a conversation the manager
// does not hold (never started, ended, or forgotten).
var ErrNoConversation = errors.New("session: no such conversation")

// StartParams starts a turn.
type StartParams struct {
	Conversation string // "" = a new conversation
	Prompt       string
	Mode         permissions.Mode
	// Existing: continue Conversation only if the manager holds it (ErrNoConversation otherwise),
	// checked under the same lock as End: a turn meant for a conversation must not start it
	// afresh after it ended.
	Existing bool
}

// convo is one conversation's state. hist belongs to the running turn (one at a time, enforced
// by Manager.mu).
type convo struct {
	id    string
	hist  History
	used  int              // Manager.uses when a turn last started on it (guarded by Manager.mu)
	mode  permissions.Mode // the mode its last turn started with (guarded by Manager.mu)
	usage Usage            // the finished turns' total (belongs to the running turn, like hist)

	// resultsMu guards results and resultOrder: full texts of tool results that were cut for the
	// context, by call id, the newest maxKeptResults.
	resultsMu   sync.Mutex
	results     map[string]string
	resultOrder []string

	// loadedMu guards loaded: the MCP tools loaded by search_tools or used, in load order (tool
	// search); they stay loaded for the conversation.
	loadedMu sync.Mutex
	loaded   []string
}

// maxKeptResults bounds the kept full results per conversation (each up to mcpbridge.MaxResultText).
const maxKeptResults = 32

func (c *convo) keep(id, text string) {
	c.resultsMu.Lock()
	defer c.resultsMu.Unlock()
	if c.results == nil {
		c.results = make(map[string]string)
	}
	if _, ok := c.results[id]; !ok {
		c.resultOrder = append(c.resultOrder, id)
	}
	c.results[id] = text
	for len(c.resultOrder) > maxKeptResults {
		delete(c.results, c.resultOrder[0])
		c.resultOrder = c.resultOrder[1:]
	}
}

func (c *convo) result(id string) (string, bool) {
	c.resultsMu.Lock()
	defer c.resultsMu.Unlock()
	t, ok := c.results[id]
	return t, ok
}

type runningTurn struct {
	conv   *convo
	cancel context.CancelFunc
}

// Manager runs conversations: one turn per conversation at a time, any number of conversations
// in parallel. It is safe for concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger

	tools      atomic.Pointer[toolSet]           // the last snapshot built (see snapshot)
	toolSearch atomic.Pointer[ToolSearchOptions] // current options (SetToolSearch); never nil after NewManager

	// providerMu guards provider, providerErr, model, price.
	providerMu  sync.Mutex
	provider    Provider
	providerErr error
	model       string // the configured model name, for Complete
	price       *Price // the model's price from the config, nil when not set

	// mu guards convs, turns, seq, uses, closed.
	mu     sync.Mutex
	convs  map[string]*convo
	turns  map[string]*runningTurn
	seq    int // last id number handed out
	uses   int // counts turn starts, for least-recently-used eviction
	closed bool

	wg sync.WaitGroup

	// noteMu guards warnedCount, lastCut (warnings and log lines said once per distinct value).
	noteMu      sync.Mutex
	warnedCount int
	lastCut     string
}

// NewManager returns a Manager using opts.Provider (see SetProvider).
func NewManager(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = 25
	}
	if opts.ResultTokens <= 0 {
		opts.ResultTokens = DefaultResultTokens
	}
	if opts.MaxConversations <= 0 {
		opts.MaxConversations = 64
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	m := &Manager{opts: opts, log: opts.Logger, convs: map[string]*convo{}, turns: map[string]*runningTurn{}}
	m.SetToolSearch(opts.ToolSearch)
	m.SetProvider(opts.Provider)
	return m
}

// SetProvider replaces the provider for turns started from now on. A bad configuration (unknown
// type, missing API key, unreadable script) is not an error here: it is logged and every turn
// reports it as an error event, so the editor shows it where the user looks.
func (m *Manager) SetProvider(cfg ProviderConfig) {
	p, err := NewProvider(cfg, m.opts.Getenv, m.opts.HTTPClient)
	if err != nil {
		m.log.Warn("session: provider not usable", "type", cfg.Type, "err", err)
	}
	model := cfg.Model
	if d, derr := cfg.WithDefaults(); derr == nil {
		model = d.Model
	}
	var price *Price
	if pr, ok := cfg.Prices.For(model); ok {
		price = &pr
	}
	m.providerMu.Lock()
	m.provider, m.providerErr, m.model, m.price = p, err, model, price
	m.providerMu.Unlock()
}

// UseProvider makes p the provider for turns started from now on (tests, embedders).
func (m *Manager) UseProvider(p Provider) {
	m.providerMu.Lock()
	m.provider, m.providerErr, m.model, m.price = p, nil, "", nil
	m.providerMu.Unlock()
}

// UseProviderPriced is UseProvider with the model's name and the price table for costs.
func (m *Manager) UseProviderPriced(p Provider, model string, prices *Prices) {
	var price *Price
	if pr, ok := prices.For(model); ok {
		price = &pr
	}
	m.providerMu.Lock()
	m.provider, m.providerErr, m.model, m.price = p, nil, model, price
	m.providerMu.Unlock()
}

func (m *Manager) currentPrice() *Price {
	m.providerMu.Lock()
	defer m.providerMu.Unlock()
	return m.price
}

func (m *Manager) currentProvider() (Provider, error) {
	m.providerMu.Lock()
	defer m.providerMu.Unlock()
	return m.provider, m.providerErr
}

func (m *Manager) resultBudget() int { return m.opts.ResultTokens * BytesPerToken }

// newID returns prefix-N, unused in ids. Caller holds m.mu.
func (m *Manager) newIDLocked(prefix string, used func(string) bool) string {
	for {
		m.seq++
		id := prefix + strconv.Itoa(m.seq)
		if !used(id) {
			return id
		}
	}
}

// Start begins a turn and returns at once; the turn runs in the background and reports through
// emit (never called concurrently for one turn; the last event is kind done). ctx is used only for
// the call itself (its values are kept; its cancellation is not: use Cancel). Start fails with
// ErrBusy when the conversation runs a turn, and for an empty prompt. An unknown conversation id
// starts a new conversation under that id.
func (m *Manager) Start(ctx context.Context, p StartParams, emit func(Event)) (conversation, turn string, err error) {
	if strings.TrimSpace(p.Prompt) == "" {
		return "", "", errors.New("session: empty prompt")
	}
	var forgotten []string
	defer func() { // after the unlock below
		for _, id := range forgotten {
			m.opts.Forgotten(id)
		}
	}()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", "", ErrClosed
	}
	convID := p.Conversation
	if convID == "" {
		convID = m.newIDLocked("conv-", func(id string) bool { _, ok := m.convs[id]; return ok })
	}
	conv := m.convs[convID]
	if conv == nil && p.Existing {
		return "", "", fmt.Errorf("%w: %s", ErrNoConversation, convID)
	}
	if conv == nil {
		conv = &convo{id: convID}
		m.convs[convID] = conv
		forgotten = m.evictLocked()
	}
	for id, rt := range m.turns {
		if rt.conv == conv {
			return "", "", fmt.Errorf("%w: turn %s is running", ErrBusy, id)
		}
	}
	m.uses++
	conv.used, conv.mode = m.uses, p.Mode
	turnID := m.newIDLocked("turn-", func(id string) bool { _, ok := m.turns[id]; return ok })
	tctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.turns[turnID] = &runningTurn{conv: conv, cancel: cancel}
	if emit == nil {
		emit = func(Event) {}
	}
	t := &turnRun{m: m, conv: conv, id: turnID, mode: p.Mode, ctx: tctx, emitFn: emit}
	m.wg.Go(func() {
		done := t.run(p.Prompt)
		cancel()
		m.mu.Lock()
		delete(m.turns, turnID)
		m.mu.Unlock()
		t.emit(done) // after the conversation is free: a client may Start the next turn on done
	})
	return convID, turnID, nil
}

// evictLocked forgets least recently used idle conversations while there are more than
// MaxConversations (a long editor session must not keep every history forever).
func (m *Manager) evictLocked() (forgotten []string) {
	for len(m.convs) > m.opts.MaxConversations {
		busy := map[*convo]bool{}
		for _, rt := range m.turns {
			busy[rt.conv] = true
		}
		var oldest *convo
		for _, c := range m.convs {
			if !busy[c] && c.used > 0 && (oldest == nil || c.used < oldest.used) {
				oldest = c
			}
		}
		if oldest == nil {
			return forgotten // all busy or new: keep them
		}
		delete(m.convs, oldest.id)
		if m.opts.Forgotten != nil {
			forgotten = append(forgotten, oldest.id)
		}
		m.log.Debug("session: forgot the least recently used conversation", "conversation", oldest.id)
	}
	return forgotten
}

// Cancel cancels a running turn: the model call and running tool calls end, the history stays
// complete, and the turn ends with done (stopReason "cancelled"). It reports whether the turn was
// running.
func (m *Manager) Cancel(turn string) bool {
	m.mu.Lock()
	rt := m.turns[turn]
	m.mu.Unlock()
	if rt == nil {
		return false
	}
	rt.cancel()
	return true
}

// Busy reports whether a turn of conversation runs.
func (m *Manager) Busy(conversation string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, rt := range m.turns {
		if rt.conv.id == conversation {
			return true
		}
	}
	return false
}

// Has reports whether conversation is known (started, not ended nor forgotten as least
// recently used).
func (m *Manager) Has(conversation string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.convs[conversation] != nil
}

// Mode is the mode the last turn of conversation started with; false when it is not known.
func (m *Manager) Mode(conversation string) (permissions.Mode, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.convs[conversation]
	if c == nil || c.used == 0 {
		return 0, false
	}
	return c.mode, true
}

// End forgets a conversation: its running turn is cancelled and its history dropped; a later
// Start with its id begins afresh. It reports whether the conversation was known.
func (m *Manager) End(conversation string) bool {
	m.mu.Lock()
	c := m.convs[conversation]
	delete(m.convs, conversation)
	for _, rt := range m.turns {
		if rt.conv == c {
			rt.cancel()
		}
	}
	m.mu.Unlock()
	return c != nil
}

// History returns a copy of a conversation's messages (tests, debugging).
func (m *Manager) History(conversation string) ([]Message, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.convs[conversation]
	if c == nil {
		return nil, false
	}
	for _, rt := range m.turns {
		if rt.conv == c {
			return nil, false // a running turn owns the history
		}
	}
	return append([]Message(nil), c.hist.Messages()...), true
}

// Close cancels every turn and waits for them to end. Start fails afterwards.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	for _, rt := range m.turns {
		rt.cancel()
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// ErrNoProvider is Complete's error when no model is configured, or its configuration is not
// usable (the error says why).
var ErrNoProvider = errors.New("session: no usable model provider")

// Completion is the answer of Complete.
type Completion struct {
	Text       string
	Model      string // the configured model name ("" when unknown, as with the script provider)
	StopReason string // llm.Stop* or the provider's own
}

// Complete runs one model call, without tools, on the current provider: what an MCP server's
// sampling request gets. maxTokens 0 is the provider's default.
func (m *Manager) Complete(ctx context.Context, system string, msgs []llm.Message, maxTokens int) (Completion, error) {
	p, err := m.currentProvider()
	if err != nil {
		return Completion{}, fmt.Errorf("%w: %v", ErrNoProvider, err)
	}
	if p == nil {
		return Completion{}, ErrNoProvider
	}
	m.providerMu.Lock()
	model := m.model
	m.providerMu.Unlock()
	var out Completion
	var text strings.Builder
	for ch, err := range p.Stream(ctx, llm.Request{System: system, Messages: msgs, MaxTokens: maxTokens, NoToolCalls: true}) {
		if err != nil {
			return Completion{}, err
		}
		switch ch.Kind {
		case llm.ChunkText:
			text.WriteString(ch.Text)
		case llm.ChunkStop:
			out.StopReason = ch.StopReason
		}
	}
	out.Text, out.Model = text.String(), model
	return out, nil
}

// ErrNoModelList is Models' error for a provider that cannot list its models (script).
var ErrNoModelList = errors.New("session: this provider cannot list its models")

// Models lists the current provider's models (GET /v1/models where the API has it) and returns
// the configured model's name with them, for the editor's model picker (switchboard.models).
func (m *Manager) Models(ctx context.Context) (current string, models []ModelInfo, err error) {
	p, err := m.currentProvider()
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrNoProvider, err)
	}
	if p == nil {
		return "", nil, ErrNoProvider
	}
	m.providerMu.Lock()
	current = m.model
	m.providerMu.Unlock()
	ml, ok := p.(llm.ModelLister)
	if !ok {
		return current, nil, ErrNoModelList
	}
	models, err = ml.Models(ctx)
	return current, models, err
}

// CallFunc runs one MCP tool call; it has the signature of [Tools.Call].
type CallFunc func(ctx context.Context, name string, args json.RawMessage) (mcpbridge.Result, error)

// CallToolVia is [Manager.CallTool] whose MCP call, once the gate allows it, runs through call
// instead of Options.Tools.Call: the caller's own wrapper for this one call (the host gives it the
// call's progress observer explicitly). Built-in tools run as in CallTool; nil call is CallTool.
func (m *Manager) CallToolVia(ctx context.Context, name string, args json.RawMessage, mode permissions.Mode, call CallFunc) (mcpbridge.Result, permissions.Decision) {
	return m.CallToolFrom(ctx, name, args, mode, call, "", "")
}

// CallToolFrom is CallToolVia for a call that via asked for on the person's behalf (an MCP Apps
// view: permissions.Request.Via), which the gate's question names; viewID is that view's id
// (permissions.Request.ViewID).
func (m *Manager) CallToolFrom(ctx context.Context, name string, args json.RawMessage, mode permissions.Mode, call CallFunc, via, viewID string) (mcpbridge.Result, permissions.Decision) {
	if call == nil && via == "" {
		return m.CallTool(ctx, name, args, mode)
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return m.callOne(ctx, m.snapshot(), nil, "", mode, name, args, nil, call, permissions.Request{Via: via, ViewID: viewID})
}
