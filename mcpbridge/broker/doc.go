// Package broker is the per-user daemon that holds one copy of each stdio MCP server the user
// marks "shared", and the client side a window uses to reach it (issue 32; the design is
// shared/designs/shared-servers-and-policy.md, sections 2 to 5).
//
// The daemon has no UI, no keys and no gate: every window keeps its own `switchboard serve`, which
// decides everything and sees a shared server as one more transport, a Unix-socket stream of
// newline-delimited JSON-RPC (an [Conn]). The daemon only multiplexes. It is the MCP client of
// each instance and acts as the server towards each attachment:
//
//   - Instances are keyed by an HMAC (random key per daemon start) of the byte-identical launch:
//     resolved command, args, the full child environment, cwd, scope and folder set. Two windows
//     share a process only if they would have started the same one, so no window can receive a
//     value (in results, errors, logs) it did not already have.
//   - Request ids and progress tokens are rewritten per attachment (upstream ids are a daemon
//     counter), so results and progress go only to the window that asked, and a cancellation
//     names only that window's call. A window that goes away has its calls cancelled upstream.
//   - A server's question (elicitation/create, sampling/createMessage) goes to the one window that
//     has requests in flight on the instance, and is refused (elicitation: cancel; sampling: the
//     user-rejected error) when no window or several windows do: it is never broadcast.
//   - An MCP task belongs to the window whose tools/call created it (tasks.go): tasks/get,
//     tasks/result, tasks/cancel and tasks/update naming another live window's task are refused,
//     tasks/list shows a window its own, notifications/tasks/status reaches the owner only. A
//     task whose window is gone is claimed by the next window of the same server name that asks
//     (a reloaded editor following its predecessor's task).
//   - Each window that asks is told when the number of windows on its instance changes
//     (switchboard/windowsChanged), so that "shared (3 windows)" is current.
//   - roots/list is answered by the daemon: user-scope instances declare no roots capability;
//     workspace-scope instances answer exactly their folder set. Resource subscriptions are
//     reference-counted and their updates reach subscribers only. initialize runs once per
//     instance; each attachment's initialize is answered from the cached result.
//
// Discovery and lifetime follow gopls -remote=auto with its gaps closed: the socket lives in a
// checked 0700 directory ([DefaultDir]), both ends check the peer's uid before sending a byte,
// the first window that needs the daemon starts it under a file lock (one daemon for a start
// storm), and the daemon exits Options.Idle after its last attachment left, removing its socket
// and stopping every child (whole process groups). There is no TCP listener.
//
// The package imports no part of the host, the session or the mcpbridge root package (which
// will import it for the "attach" dial kind).
package broker
