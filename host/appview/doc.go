// Package appview serves MCP App views (issue 31) to a browser, for editors that cannot show
// them themselves (Neovim, Helix, any LSP editor): the view runs in a sandboxed frame of a small
// host page on 127.0.0.1, and the page relays the view's requests to the host over fetch.
//
// The trust boundary is the view: its HTML comes from an MCP server. What it must not do, and
// what stops it:
//   - reach the host page, its secret or anything else of 127.0.0.1: the view's document is
//     served with `sandbox allow-scripts` (in its CSP header and the frame's attribute), so it
//     runs in an opaque origin; its CSP allows no 'self' and only the origins it declared;
//   - act without the gate: its only way out is postMessage to the host page, which relays
//     tools/call and ui/open-link to the host ([Bridge]), where they pass the confirm gate or a
//     question to the person;
//   - be opened by another page or process: every address holds a one-time token (the page's,
//     used by the first load; the view document's, used by the host page), the relay wants the
//     page's secret in a header and the page's own Origin, and a Host header other than the
//     listener's address is refused (DNS rebinding). Nothing else is served. On Linux a
//     connection from another user of the machine is closed before a byte is read (peer.go): the
//     page's address is on the command line the browser was opened with, which they can list.
//
// The server starts on the first Open and stops after Options.Idle without a view's request
// (one that holds a page's token or secret: other requests do not keep it listening); the
// tokens and secrets of a stopped server are forgotten. CloseView stops serving one view (the
// host calls it when the view's chat conversation ends).
package appview
