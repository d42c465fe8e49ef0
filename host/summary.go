package host

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
)

// Text for people and text for the model differ: the model keeps the precise wording it acts on
// (a denial says "do not retry", a failure is {"error": ...}); a person gets one plain sentence
// saying what happened and what to do. Both are built from the same result and decision.

// maxSummary bounds a summary (it quotes a server's error).
const maxSummary = 300

// Summary is one plain sentence for a person about a tool call that did not produce a result:
// denied, not run, or failed; "" when the tool ran and returned a result (its output speaks for
// itself). What a server controls is escaped.
func (a *App) Summary(name string, res mcpbridge.Result, dec permissions.Decision) string {
	tool := safetext.Line(name)
	switch {
	case dec.By == session.ByUnknown:
		return a.unknownToolSummary(name)
	case dec.By == session.ByInvalid:
		return fmt.Sprintf("%s was not run: its arguments are not a JSON object.", tool)
	case !dec.Allowed:
		return deniedSummary(tool, dec)
	case !res.IsError:
		return ""
	}
	text := strings.TrimSpace(res.Text)
	if text == "the user cancelled this tool call" {
		return fmt.Sprintf("You cancelled %s.", tool)
	}
	if strings.HasPrefix(text, "cancelled: ") {
		return fmt.Sprintf("%s was cancelled.", tool)
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(text), &e) == nil && e.Error != "" {
		text = e.Error
	}
	if text == "" {
		return fmt.Sprintf("%s failed without saying why.", tool)
	}
	first, _, _ := strings.Cut(text, "\n")
	return fmt.Sprintf("%s failed: %s", tool, sentence(safetext.Bounded(first, maxSummary)))
}

// unknownToolSummary says why there is no such tool: most often its server is not running.
func (a *App) unknownToolSummary(name string) string {
	server, tool, ok := mcpbridge.ParseToolName(name)
	if !ok {
		return fmt.Sprintf("There is no tool named %s.", safetext.Line(name))
	}
	for _, st := range a.Servers() { // escaped
		if st.Name != server {
			continue
		}
		switch st.State {
		case mcpbridge.StateReady:
			return fmt.Sprintf("Server '%s' has no tool named '%s'.", st.Name, safetext.Line(tool))
		case mcpbridge.StateFailed:
			if msg, ok := strings.CutPrefix(st.Error, "configuration: "); ok {
				return fmt.Sprintf("Server '%s' is not running: its entry in %s has a problem (%s); fix the file.", st.Name, st.Source, safetext.Bounded(msg, maxSummary))
			}
			why := st.Error
			if why == "" {
				why = "it failed"
			}
			why, _, _ = strings.Cut(why, "\n")
			return fmt.Sprintf("Server '%s' is not running (%s); reconnect it.", st.Name, safetext.Bounded(why, maxSummary))
		case mcpbridge.StateStarting:
			return fmt.Sprintf("Server '%s' is still starting; try again in a moment.", st.Name)
		case mcpbridge.StateUntrusted:
			return fmt.Sprintf("Server '%s' is not running: it comes from a workspace file you have not trusted; trust it to start it.", st.Name)
		case mcpbridge.StateDisabled:
			return fmt.Sprintf("Server '%s' is disabled in its configuration (%s).", st.Name, st.Source)
		default:
			return fmt.Sprintf("Server '%s' is not running (%s); reconnect it.", st.Name, st.State)
		}
	}
	return fmt.Sprintf("No MCP server named '%s' is configured, so there is no tool %s.", safetext.Line(server), safetext.Line(name))
}

func deniedSummary(tool string, dec permissions.Decision) string {
	switch dec.By {
	case permissions.ByUser:
		return fmt.Sprintf("You denied %s.", tool)
	case permissions.ByTimeout:
		return fmt.Sprintf("%s was denied: nobody answered the approval in time.", tool)
	case permissions.ByCancel:
		return fmt.Sprintf("%s was cancelled before anyone answered.", tool)
	case permissions.ByMode:
		return fmt.Sprintf("%s was denied: the mode is allowlist-only and the allowlist does not grant it.", tool)
	case permissions.ByDisconnect:
		return fmt.Sprintf("%s was denied: nobody could answer the approval (no editor or terminal was there to ask).", tool)
	case permissions.ByShutdown:
		return fmt.Sprintf("%s was denied: Switchboard was shutting down.", tool)
	case permissions.ByPolicy:
		return fmt.Sprintf("%s was blocked by your organisation's policy: %s", tool, sentence(safetext.Bounded(strings.TrimPrefix(dec.Reason, "denied: "), maxSummary)))
	}
	why := strings.TrimPrefix(dec.Reason, "denied: ")
	if why == "" {
		why = "the confirm gate denied it"
	}
	return fmt.Sprintf("%s was not run: %s", tool, sentence(safetext.Bounded(why, maxSummary)))
}

// DecisionLabel is how a person reads a gate decision on a tool call, saying which grant it was:
// "allowed once by you", "allowed by you, always for this tool", "allowed by you for every tool
// of server 's'", "allowed by allowlist entry e". by and reason are the decision's (as a chat
// event carries them).
func DecisionLabel(allowed bool, by, reason string) string {
	if !allowed {
		switch by {
		case permissions.ByUser:
			return "denied by you"
		case "":
			return ""
		case permissions.ByMode:
			return "denied: not on your allowlist (mode allowlist-only)"
		case permissions.ByTimeout:
			return "denied: no answer in time"
		case permissions.ByCancel:
			return "denied: the request was cancelled"
		case permissions.ByDisconnect:
			return "denied: the editor went away before an answer"
		case permissions.ByShutdown:
			return "denied: Switchboard was shutting down"
		case permissions.ByPin:
			return "held: its definition changed since you approved it"
		case permissions.ByPolicy:
			return "blocked by your organisation's policy"
		case session.ByRepeat:
			if reason != "" {
				return "not run: " + safetext.Line(reason)
			}
			return "not run again: it repeats a call that was denied or failed"
		case permissions.ByError:
			return "denied: Switchboard could not ask you"
		case permissions.ByLimit:
			return "not asked: its view already had a question open, or you stopped its questions"
		}
		return "denied (" + safetext.Line(by) + ")"
	}
	switch by {
	case permissions.ByUser:
		switch {
		case strings.HasPrefix(reason, "allowed once"):
			return "allowed once by you"
		case strings.Contains(reason, "__*"):
			entry := reason[strings.Index(reason, "added ")+len("added "):]
			entry, _, _ = strings.Cut(entry, " ")
			server, _, _ := mcpbridge.ParseToolName(strings.TrimSuffix(entry, "*") + "x")
			return fmt.Sprintf("allowed by you for every tool of server '%s'", safetext.Line(server))
		}
		return "allowed by you, always for this tool"
	case permissions.ByAllowlist:
		entry := strings.TrimPrefix(reason, "allowed by allowlist entry ")
		entry, _, _ = strings.Cut(entry, " ")
		return "allowed by allowlist entry " + safetext.Line(entry)
	case permissions.ByMode:
		return "allowed: mode always-allow"
	case permissions.ByBuiltin:
		return "allowed: read-only built-in tool"
	case permissions.ByPolicy:
		return "allowed by your organisation's policy"
	}
	return "allowed (" + by + ")"
}

// sentence ends s with a full stop unless it ends with punctuation already.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s[len(s)-1:], ".!?") {
		return s
	}
	return s + "."
}
