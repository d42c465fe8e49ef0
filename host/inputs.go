package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

// inputs are the values of config files' ${input:ID} (VS Code's "inputs"): asked once through
// the UI (a KindInput question), kept in the token store (the OS keychain or the 0600 file of
// OAuth sign-ins, mcpbridge/tokenstore) under the defining file + id, and read back after a
// restart without asking. The registry's getenv answers config.InputVar names from here, so
// ServerConfig.Resolve and Redact see the values and nothing else does.
type inputs struct {
	store tokenstore.Store

	mu      sync.Mutex        // guards vals, missing, asking
	vals    map[string]string // by key: values known this session
	missing map[string]bool   // keys the store had no value for (until the next config load)
	asking  map[string]bool   // keys with a question open
}

// storeTimeout bounds one read or write of the store (a keychain that shows an unlock prompt).
const storeTimeout = 10 * time.Second

// wrap returns lookup answering config.InputVar names from the inputs.
func (in *inputs) wrap(store tokenstore.Store, lookup func(string) (string, bool)) func(string) (string, bool) {
	in.store = store
	return func(name string) (string, bool) {
		if key, ok := config.InputKeyOfVar(name); ok {
			return in.value(key)
		}
		return lookup(name)
	}
}

// value is the input's value: from this session, else from the store (once per config load).
func (in *inputs) value(key string) (string, bool) {
	in.mu.Lock()
	if v, ok := in.vals[key]; ok {
		in.mu.Unlock()
		return v, true
	}
	if in.missing[key] || in.store == nil {
		in.mu.Unlock()
		return "", false
	}
	in.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	v, err := config.LoadInput(ctx, in.store, key)
	in.mu.Lock()
	defer in.mu.Unlock()
	if err != nil {
		if in.missing == nil {
			in.missing = map[string]bool{}
		}
		in.missing[key] = true
		return "", false
	}
	in.setLocked(key, v)
	return v, true
}

func (in *inputs) setLocked(key, v string) {
	if in.vals == nil {
		in.vals = map[string]string{}
	}
	in.vals[key] = v
	delete(in.missing, key)
}

// forgetMissing makes the next read of a missing value ask the store again.
func (in *inputs) forgetMissing() {
	in.mu.Lock()
	in.missing = nil
	in.mu.Unlock()
}

// maybeAskInputs asks for the inputs the failed server name lacks, unless asked already;
// false when it lacks none (it failed for another reason). Called with the server-state lock held.
func (a *App) maybeAskInputs(name string) bool {
	cfg, ok := a.configFor(name)
	if !ok || len(cfg.Inputs) == 0 {
		return false
	}
	var lack []config.Input
	for _, in := range cfg.Inputs {
		if _, ok := a.inputs.value(in.Key); !ok {
			lack = append(lack, in)
		}
	}
	if len(lack) == 0 {
		return false
	}
	a.inputs.mu.Lock()
	if a.inputs.asking == nil {
		a.inputs.asking = map[string]bool{}
	}
	var ask []config.Input
	for _, in := range lack {
		if !a.inputs.asking[in.Key] {
			a.inputs.asking[in.Key] = true
			ask = append(ask, in)
		}
	}
	a.inputs.mu.Unlock()
	if len(ask) > 0 {
		go a.askInputs(cfg, ask)
	}
	return true
}

// askInputs asks for each input in turn (stopping at the first not answered), keeps each value
// in the store, then restarts the servers that use them.
func (a *App) askInputs(cfg config.ServerConfig, ask []config.Input) {
	defer func() {
		a.inputs.mu.Lock()
		for _, in := range ask {
			delete(a.inputs.asking, in.Key)
		}
		a.inputs.mu.Unlock()
	}()
	var got []string
	for _, in := range ask {
		if _, ok := a.inputs.value(in.Key); ok {
			got = append(got, in.Key)
			continue
		}
		v, ok := a.askInput(cfg, in)
		if !ok {
			break
		}
		a.inputs.mu.Lock()
		a.inputs.setLocked(in.Key, v)
		a.inputs.mu.Unlock()
		got = append(got, in.Key)
		ctx, cancel := context.WithTimeout(a.baseCtx, storeTimeout)
		err := config.SaveInput(ctx, a.inputs.store, in.Key, v)
		cancel()
		if err != nil {
			a.log.Warn(fmt.Sprintf("host: keeping input %q: %v", in.ID, errors.Unwrap(err)))
			a.ui.Notify(LevelWarning, fmt.Sprintf("Switchboard could not keep input '%s' in the keychain or its file; it is used until Switchboard exits and asked again next time.", safetext.Bounded(in.ID, 64)))
		}
	}
	if len(got) == 0 {
		return
	}
	for _, c := range a.cfgs.all() {
		uses := slices.ContainsFunc(c.Inputs, func(in config.Input) bool { return slices.Contains(got, in.Key) })
		if !uses {
			continue
		}
		a.expectRestart(c.Name)
		if _, err := a.registry.ReconnectServer(a.baseCtx, c.Name); err != nil {
			a.log.Debug("host: reconnect after input", "server", c.Name, "error", err)
		}
	}
}

// askInput puts one KindInput question and returns the person's value.
func (a *App) askInput(cfg config.ServerConfig, in config.Input) (string, bool) {
	shown := in
	shown.ID = safetext.Bounded(in.ID, 64)
	shown.Description = safetext.Bounded(in.Description, 300)
	shown.Options = make([]string, len(in.Options))
	for i, o := range in.Options {
		shown.Options[i] = safetext.Bounded(o, 200)
	}
	q := a.questions.open(KindInput, 0, func(q *Question) {
		q.Server = cfg
		q.Input = shown
		q.Text = fmt.Sprintf("MCP server '%s' needs input '%s'", safetext.Bounded(cfg.Name, 64), shown.ID)
		if shown.Description != "" {
			q.Text += ": " + shown.Description
		}
		q.Text += "."
		if in.Type == config.InputPickString {
			q.check = func(r Reply) error {
				if !slices.Contains(shown.Options, r.Value) {
					return badRequest("input %q: pick one of its options", shown.ID)
				}
				return nil
			}
		}
	})
	a.events.record("input", map[string]any{"server": cfg.Name, "input": shown.ID, "phase": "asked"})
	a.ui.Ask(q)
	o := q.wait(a.baseCtx, a.gone)
	a.events.record("input", map[string]any{"server": cfg.Name, "input": shown.ID, "phase": "resolved", "by": o.By})
	if o.By != ByUser {
		return "", false
	}
	v := o.Reply.Value
	if in.Type == config.InputPickString {
		v = in.Options[slices.Index(shown.Options, v)] // the option as written, not as shown
	}
	return v, true
}
