package broker

import (
	"encoding/json"
	"fmt"
	"slices"
)

// The hello is one JSON line each way at the start of every connection, before any MCP.

// Ops a hello may ask for.
const (
	opAttach = ""       // attach to an instance, then MCP
	opStatus = "status" // the daemon's state, then close
	opStop   = "stop"   // stop the daemon (its windows' servers fail over), then close
	opDrain  = "drain"  // give up the socket; exit once the attached windows have left
	opWatch  = "watch"  // answer once an instance of this launch (re)starts, then close
)

// features the daemon offers. A window that requires one it lacks runs that server in-window.
var features = []string{"attach", "roots", "subscriptions", "elicitation-routing", "watch", featurePipes, featureWindows, featureTasks}

// featureWindows: a window that says it in its hello is told, by switchboard/windowsChanged
// ({windows, seq}), each time the number of windows attached to its instance changes, so that
// its status says "shared (3 windows)" as it is now, not as it was when it attached. A window of
// an older build does not say it, and gets no frame it would not understand.
const featureWindows = "windows"

// featureTasks: the daemon keeps each MCP task to the window that started it (tasks.go). A
// window needs to send nothing for it; it is listed so that `check` and tests can tell.
const featureTasks = "task-owners"

// featurePipes: a window that says it in its hello gets its attachment's frames on a pair of
// pipes passed with the final reply (helloReply.Pipes) instead of the socket. A Unix socket
// wakes its peer's poller with a write-space event (EPOLLOUT) each time one side reads, so every
// relayed frame cost the other process one wake-up for nothing, two per call between them; a
// pipe wakes a writer only when it was full. The socket stays open, unused, for the attachment's
// life.
const featurePipes = "pipes"

type hello struct {
	Broker   int      `json:"broker"`
	Minor    int      `json:"minor"`
	Build    string   `json:"build"`
	Features []string `json:"features,omitempty"`
	Require  []string `json:"require,omitempty"`
	Op       string   `json:"op,omitempty"`
	Instance *Request `json:"instance,omitempty"`
	// Existing: attach only to an instance that already runs (switchboard call and check: warm
	// when a window runs the server, never starting one for a one-shot command).
	Existing bool `json:"existing,omitempty"`
}

// Request is what a window asks to attach to.
type Request struct {
	Launch Launch `json:"launch"`
	// Name is the server's name in the window, and Display its launch as shown to people
	// (templates kept, no values): for status and the daemon's log only.
	Name    string `json:"name"`
	Display string `json:"display,omitempty"`
	// ProtocolVersion is the MCP revision the window's client will ask for. The instance is
	// initialized with the first window's; a window asking for another one is refused and runs
	// the server itself.
	ProtocolVersion string `json:"protocolVersion"`
	// ClientInfo and Capabilities are the window's initialize values. The instance declares the
	// first window's capabilities, roots replaced according to its scope.
	ClientInfo   json.RawMessage `json:"clientInfo,omitempty"`
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
}

type helloReply struct {
	Broker   int      `json:"broker"`
	Minor    int      `json:"minor"`
	Build    string   `json:"build"`
	Features []string `json:"features,omitempty"`
	Pid      int      `json:"pid"`
	Error    string   `json:"error,omitempty"`
	// Retry: the daemon was exiting; dial again (a new daemon will be started).
	Retry bool `json:"retry,omitempty"`
	// Pending: the hello was read and the instance is being found or started; the final reply
	// follows. It comes at once, so a window can tell a daemon that does not answer (stopped,
	// hung) from a server that takes long to start.
	Pending bool `json:"pending,omitempty"`
	// NoInstance: asked for an existing instance, and none runs.
	NoInstance bool    `json:"noInstance,omitempty"`
	Instance   string  `json:"instance,omitempty"`
	ServerPid  int     `json:"serverPid,omitempty"`
	Windows    int     `json:"windows,omitempty"`
	Status     *Status `json:"status,omitempty"`
	// Started answers a watch: an instance of the launch runs (again).
	Started bool `json:"started,omitempty"`
	// Pipes: the attachment's frames move to the two pipes whose ends come with this reply
	// (SCM_RIGHTS): the window's write end first, then its read end (featurePipes).
	Pipes bool  `json:"pipes,omitempty"`
	fds   []int // the descriptors that came with it (the window's side)
}

// Status is the daemon's state as `switchboard daemon status` shows it: names and display forms,
// never a launch's values.
type Status struct {
	Pid       int              `json:"pid"`
	Build     string           `json:"build"`
	Broker    int              `json:"broker"`
	Minor     int              `json:"minor"`
	Instances []InstanceStatus `json:"instances"`
}

// InstanceStatus is one running instance.
type InstanceStatus struct {
	ID        string `json:"id"` // the first 12 hex digits of the key
	Name      string `json:"name"`
	Display   string `json:"display,omitempty"`
	Scope     string `json:"scope"`
	ServerPid int    `json:"serverPid"`
	Windows   int    `json:"windows"`
}

// checkHello applies the skew rule on the daemon's side: the same major attaches whatever the
// build (the socket name already keeps other majors apart); a required feature the daemon lacks
// is refused so that the window runs the server itself.
func checkHello(h *hello, build string) error {
	if h.Broker != Major {
		return fmt.Errorf("broker protocol %d is not %d", h.Broker, Major)
	}
	for _, f := range h.Require {
		if !slices.Contains(features, f) {
			return fmt.Errorf("this daemon (build %s) lacks the feature %q", build, f)
		}
	}
	return nil
}

// SkewWarning is the line `switchboard check` and the status show when the daemon runs another
// build than this window (empty when they match). Cline's stale daemon taught to tell the user
// rather than reuse it silently; killing it would break the other windows.
func SkewWarning(daemonBuild, ours string) string {
	if daemonBuild == ours {
		return ""
	}
	return fmt.Sprintf("shared servers run in Switchboard %s (this is %s); they move to this version when all windows close, or run `switchboard daemon restart`", daemonBuild, ours)
}
