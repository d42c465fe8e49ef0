package host

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/oauth"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

// URLOpener is implemented by a UI that can open a page in the person's browser (the language
// server: window/showDocument with external). A UI without it is told the URL in a notice.
type URLOpener interface {
	OpenURL(ctx context.Context, url string) error
}

// signIns tracks the sign-in questions asked and the sign-ins running.
type signIns struct {
	mu      sync.Mutex
	asked   map[string]bool // servers asked since they last left needs-auth
	running map[string]bool
}

// tokenStore is the registry's TokenStore: the given one, or the keychain/file store found on
// first use (the keychain probe may take seconds: not at startup).
func (a *App) tokenStore(given tokenstore.Store) tokenstore.Store {
	if given != nil {
		return given
	}
	return &lazyStore{open: func() tokenstore.Store {
		s, where := tokenstore.Default(a.lookupEnv)
		a.log.Info("host: OAuth sign-ins are kept in " + where)
		return s
	}}
}

type lazyStore struct {
	once  sync.Once
	open  func() tokenstore.Store
	store tokenstore.Store
}

func (l *lazyStore) get() tokenstore.Store {
	l.once.Do(func() { l.store = l.open() })
	return l.store
}
func (l *lazyStore) Load(ctx context.Context, s string) (tokenstore.Credential, error) {
	return l.get().Load(ctx, s)
}
func (l *lazyStore) Save(ctx context.Context, s string, c tokenstore.Credential) error {
	return l.get().Save(ctx, s, c)
}
func (l *lazyStore) Delete(ctx context.Context, s string) error { return l.get().Delete(ctx, s) }

// signInSite is what the person is shown of a server's URL: scheme and host, as written.
func signInSite(cfg config.ServerConfig) string {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Host == "" {
		return safetext.Bounded(cfg.URL, 200)
	}
	return safetext.Bounded(u.Scheme+"://"+u.Host, 200)
}

// maybeAskSignIn asks once, each time a server comes to need a sign-in, whether to sign in now.
// Called with the server-state lock held.
func (a *App) maybeAskSignIn(st mcpbridge.ServerStatus) {
	a.signIns.mu.Lock()
	defer a.signIns.mu.Unlock()
	if a.signIns.asked == nil {
		a.signIns.asked = map[string]bool{}
	}
	if a.signIns.asked[st.Name] || a.signIns.running[st.Name] {
		return
	}
	cfg, ok := a.configFor(st.Name)
	if !ok {
		return
	}
	a.signIns.asked[st.Name] = true
	a.goBg(func() { a.askSignIn(cfg) })
}

// askSignIn puts "MCP server 'x' needs you to sign in (https://host)" with Sign in / Not now.
func (a *App) askSignIn(cfg config.ServerConfig) {
	q := a.questions.open(KindSignIn, 0, func(q *Question) {
		q.Server = cfg
		q.Text = fmt.Sprintf("MCP server '%s' needs you to sign in (%s).", safetext.Bounded(cfg.Name, 64), signInSite(cfg))
	})
	a.ui.Ask(q)
	o := q.wait(a.baseCtx, a.gone)
	if o.By != ByUser || !o.Reply.Allow {
		return
	}
	if _, err := a.SignIn(a.baseCtx, cfg.Name); err != nil {
		a.log.Warn(fmt.Sprintf("host: sign in to %s: %v", cfg.Name, err))
	}
}

// SignIn runs the OAuth sign-in of one server (switchboard.signIn, the prompt's Sign in): the
// authorization page opens in the person's browser, and the server connects when the browser
// comes back, with no restart. It returns when the sign-in ended.
func (a *App) SignIn(ctx context.Context, name string) ([]mcpbridge.ServerStatus, error) {
	cfg, ok := a.configFor(name)
	if !ok {
		return nil, badRequest("unknown server %q (known: %s)", name, strings.Join(a.serverNames(), ", "))
	}
	if cfg.Transport == config.TransportStdio {
		return nil, badRequest("server %q runs as a program (stdio): only http and sse servers sign in", name)
	}
	a.signIns.mu.Lock()
	if a.signIns.running == nil {
		a.signIns.running = map[string]bool{}
	}
	if a.signIns.running[name] {
		a.signIns.mu.Unlock()
		return nil, badRequest("a sign-in to %q is already waiting for the browser", name)
	}
	a.signIns.running[name] = true
	a.signIns.mu.Unlock()
	defer func() {
		a.signIns.mu.Lock()
		delete(a.signIns.running, name)
		delete(a.signIns.asked, name) // a sign-in that did not help may ask again later
		a.signIns.mu.Unlock()
	}()
	a.events.record("signIn", map[string]any{"server": name, "phase": "start"})
	a.expectRestart(name)
	st, err := a.registry.SignIn(ctx, name, oauth.SignInOptions{Open: a.openURL, Timeout: a.opts.SignInTimeout})
	if err != nil {
		a.events.record("signIn", map[string]any{"server": name, "phase": "failed"})
		msg := safetext.Bounded(strings.TrimPrefix(err.Error(), "mcpbridge: "), 300)
		a.ui.Notify(LevelWarning, fmt.Sprintf("Switchboard: signing in to MCP server '%s' did not complete: %s. Try again with Sign in.", safetext.Bounded(name, 64), msg))
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return a.statuses(a.registry.Servers()), nil
	}
	a.events.record("signIn", map[string]any{"server": name, "phase": "done", "state": st.State})
	if st.State == mcpbridge.StateReady {
		a.ui.Notify(LevelInfo, fmt.Sprintf("Switchboard: signed in to MCP server '%s'.", safetext.Bounded(name, 64)))
	}
	return a.statuses(a.registry.Servers()), nil
}

// SignOut forgets a server's sign-in (switchboard.signOut); the server then needs a sign-in again.
func (a *App) SignOut(ctx context.Context, name string) ([]mcpbridge.ServerStatus, error) {
	cfg, ok := a.configFor(name)
	if !ok {
		return nil, badRequest("unknown server %q (known: %s)", name, strings.Join(a.serverNames(), ", "))
	}
	if cfg.Transport == config.TransportStdio {
		return nil, badRequest("server %q runs as a program (stdio): it has no sign-in", name)
	}
	a.signIns.mu.Lock()
	if a.signIns.asked == nil {
		a.signIns.asked = map[string]bool{}
	}
	a.signIns.asked[name] = true // signed out on purpose: do not ask at once
	a.signIns.mu.Unlock()
	a.expectRestart(name)
	if _, err := a.registry.SignOut(ctx, name); err != nil {
		return nil, err
	}
	a.events.record("signOut", map[string]any{"server": name})
	return a.statuses(a.registry.Servers()), nil
}

// openURL shows the authorization page: in the browser when the UI can open one, and the URL in
// a notice when it cannot (or fails).
func (a *App) openURL(ctx context.Context, u string) error {
	if o, ok := a.ui.(URLOpener); ok {
		if err := o.OpenURL(ctx, u); err == nil {
			return nil
		}
	}
	a.ui.Notify(LevelInfo, "Switchboard: open this page to sign in: "+safetext.Bounded(u, 2000))
	return nil
}
