package appview

import (
	"encoding/json"
	"html"
	"strings"
)

// hostPage is the small page that holds the view's frame and speaks the MCP Apps postMessage
// protocol (ui/initialize, the tool input and result, size changes, display modes) with it. It
// answers what it can itself and relays tools/call, ui/open-link, ui/update-model-context and
// ui/message (offered only when Page.Message) to /rpc with its secret; any
// other request gets "method not found". Messages from anything but its own frame are ignored.
func hostPage(p *Page, nonce, appURL, secret, version string) string {
	data, _ := json.Marshal(map[string]any{ // ignore error: JSON values; escapes <, > and &
		"app": appURL, "secret": secret, "init": p.Init, "version": version, "message": p.Message,
	})
	r := strings.NewReplacer(
		"{{NONCE}}", nonce,
		"{{TITLE}}", html.EscapeString(p.Title),
		"{{ALLOW}}", html.EscapeString(p.Allow),
		"{{DATA}}", string(data),
	)
	return r.Replace(hostPageTemplate)
}

const hostPageTemplate = `<!doctype html>
<html><head><meta charset="utf-8"><title>{{TITLE}} - Switchboard</title>
<style nonce="{{NONCE}}">
body { margin: 0; font: 14px system-ui, sans-serif; background: Canvas; color: CanvasText; color-scheme: light dark; }
header { padding: 6px 12px; border-bottom: 1px solid GrayText; display: flex; gap: 12px; align-items: center; }
header span { flex: 1; }
iframe { border: 0; width: 100%; height: 320px; display: block; }
body.fullscreen iframe { height: calc(100vh - 40px); }
</style></head>
<body>
<header><span>{{TITLE}}: a view from an MCP server. Its tool calls ask you as any call does.</span><span id="state"></span></header>
<iframe id="app" sandbox="allow-scripts" allow="{{ALLOW}}" referrerpolicy="no-referrer"></iframe>
<script type="application/json" id="data" nonce="{{NONCE}}">{{DATA}}</script>
<script nonce="{{NONCE}}">
(() => {
  const data = JSON.parse(document.getElementById('data').textContent);
  const init = data.init || {};
  const frame = document.getElementById('app');
  const state = document.getElementById('state');
  let mode = 'inline';
  const post = (m) => frame.contentWindow && frame.contentWindow.postMessage(m, '*');
  const reply = (id, result) => post({jsonrpc: '2.0', id, result});
  const fail = (id, code, message) => post({jsonrpc: '2.0', id, error: {code, message}});
  const notify = (method, params) => post({jsonrpc: '2.0', method, params});
  const dark = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
  const hostContext = Object.assign({
    theme: dark ? 'dark' : 'light', displayMode: mode, availableDisplayModes: ['inline', 'fullscreen'],
    locale: navigator.language, timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    platform: 'web', userAgent: 'switchboard', containerDimensions: {maxHeight: 4000, maxWidth: 4000},
  }, init.hostContext || {});
  async function relay(m) {
    try {
      const r = await fetch('/rpc', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Switchboard-Secret': data.secret},
        body: JSON.stringify({method: m.method, params: m.params || {}})});
      if (!r.ok) { fail(m.id, -32603, 'Switchboard refused the request (' + r.status + ')'); return; }
      const out = await r.json();
      out.error ? fail(m.id, out.error.code, out.error.message) : reply(m.id, out.result);
    } catch (e) { fail(m.id, -32603, 'Switchboard is not reachable'); state.textContent = 'Switchboard stopped serving this view.'; }
  }
  let delivered = false;
  window.addEventListener('message', (e) => {
    if (e.source !== frame.contentWindow) return;
    const m = e.data;
    if (!m || m.jsonrpc !== '2.0' || typeof m.method !== 'string') return;
    const isRequest = m.id !== undefined && m.id !== null;
    switch (m.method) {
    case 'ui/initialize':
      reply(m.id, {protocolVersion: '2026-01-26', hostInfo: {name: 'switchboard', version: data.version || 'dev'},
        hostCapabilities: Object.assign({openLinks: {}, serverTools: {}, logging: {}, updateModelContext: {text: {}, structuredContent: {}}},
          data.message ? {message: {text: {}}} : {}), hostContext});
      return;
    case 'ui/notifications/initialized':
      if (delivered) return;
      delivered = true;
      notify('ui/notifications/tool-input', {arguments: init.toolInput || {}});
      if (init.toolResult) notify('ui/notifications/tool-result', init.toolResult);
      state.textContent = '';
      return;
    case 'ui/notifications/size-changed':
      if (m.params && typeof m.params.height === 'number' && mode === 'inline') {
        frame.style.height = Math.max(40, Math.min(4000, Math.ceil(m.params.height))) + 'px';
      }
      return;
    case 'ui/request-display-mode': {
      const want = m.params && m.params.mode;
      mode = want === 'fullscreen' ? 'fullscreen' : 'inline';
      document.body.classList.toggle('fullscreen', mode === 'fullscreen');
      reply(m.id, {mode});
      notify('ui/notifications/host-context-changed', {displayMode: mode});
      return;
    }
    case 'ping':
      if (isRequest) reply(m.id, {});
      return;
    case 'tools/call':
    case 'ui/open-link':
    case 'ui/update-model-context':
    case 'ui/message':
      if (isRequest) relay(m);
      return;
    case 'notifications/message':
    case 'ui/notifications/request-teardown':
      return;
    default:
      if (isRequest) fail(m.id, -32601, 'Switchboard does not support ' + String(m.method).slice(0, 80));
    }
  });
  frame.src = data.app;
})();
</script>
</body></html>
`
