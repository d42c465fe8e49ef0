package host

import (
	"slices"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// Choice is one button of a server's question asked without a form: its title (escaped, cut) and
// the answer it stands for.
type Choice struct {
	Title string
	Reply Reply
}

// ChoiceOptions are the front end's words for Choices.
type ChoiceOptions struct {
	Yes, No  string   // the titles of a yes/no field's buttons
	Max      int      // at most this many buttons for a choice
	Reserved []string // titles the front end adds itself (Decline): no choice may take one
}

// Choices is the policy for a front end without forms: a question of one yes/no field, or of one
// choice among at most o.Max values, can be asked with buttons; label names the field. Any other
// form cannot (ok false: the front end cancels it and says where it can be answered). No choice
// takes a reserved title and no two share one (cut titles can collide, and a button must map
// back to one value).
func Choices(e mcpbridge.Elicitation, o ChoiceOptions) (label string, choices []Choice, ok bool) {
	if len(e.Fields) != 1 || e.Mode == "url" {
		return "", nil, false
	}
	f := e.Fields[0]
	accept := func(v any) Reply {
		return Reply{Elicit: mcpbridge.ElicitResult{Action: mcpbridge.ElicitAccept, Content: map[string]any{f.Name: v}}}
	}
	switch {
	case f.Type == "boolean":
		choices = []Choice{{o.Yes, accept(true)}, {o.No, accept(false)}}
	case f.Type == "string" && len(f.Enum) > 0 && len(f.Enum) <= o.Max:
		for i, v := range f.Enum {
			choices = append(choices, Choice{safetext.Bounded(f.EnumTitles[i], 40), accept(v)})
		}
	default:
		return "", nil, false
	}
	seen := map[string]bool{}
	for _, c := range choices {
		if seen[c.Title] || slices.Contains(o.Reserved, c.Title) {
			return "", nil, false
		}
		seen[c.Title] = true
	}
	label = f.Title
	if label == "" {
		label = f.Name
	}
	return safetext.Bounded(label, 80), choices, true
}

// StartupCounts counts the servers meant to run (starting, ready or failed), those whose attempt
// has ended (ready or failed), and the ready ones: what a front end shows while servers start.
func (a *App) StartupCounts() (total, done, ready int) {
	for _, st := range a.Servers() {
		switch st.State {
		case "starting":
			total++
		case "ready":
			total, done, ready = total+1, done+1, ready+1
		case "failed":
			total, done = total+1, done+1
		}
	}
	return total, done, ready
}
