package host

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"

	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// Elicitation: an MCP server asking the person for input (MCP elicitation/create), see README
// "Protocol additions". The application opens a Question (its form with the labels escaped, or a
// page to open) and the UI shows it: an editor with forms as switchboard/elicitationRequested,
// others as buttons for the simple forms, the terminal line by line. Every way out (answer,
// timeout, the server cancelling, the front end gone) resolves the question once.

// elicit is mcpbridge.Options.Elicit.
func (a *App) elicit(ctx context.Context, e mcpbridge.Elicitation) mcpbridge.ElicitResult {
	cancelled := mcpbridge.ElicitResult{Action: mcpbridge.ElicitCancel}
	select {
	case <-a.gone:
		return cancelled
	default:
	}
	fields := e.Fields
	var shownURL string
	if e.Mode == "url" {
		u, err := ElicitURL(e.URL)
		if err != nil {
			a.log.Warn(fmt.Sprintf("host: MCP server '%s' asked to open %q: %v; declined", e.Server, safetext.Bounded(e.URL, 200), err))
			return mcpbridge.ElicitResult{Action: mcpbridge.ElicitDecline}
		}
		e.URL, shownURL = u.String(), ShownURL(u)
	}
	ctx, cancel := context.WithTimeout(ctx, a.gate.Timeout())
	defer cancel()
	q := a.questions.open(KindElicitation, a.gate.Timeout(), func(q *Question) {
		shown := e
		shown.Message = safetext.Bounded(e.Message, maxElicitMessage)
		shown.Fields = displayFields(e.Fields)
		q.Elicitation = shown
		q.Text = fmt.Sprintf("MCP server '%s' asks: %s", e.Server, shown.Message)
		if e.Mode == "url" {
			q.Text = fmt.Sprintf("MCP server '%s' asks you to open %s: %s", e.Server, shownURL, shown.Message)
		}
		q.check = func(r Reply) error { return checkElicitReply(fields, r.Elicit) }
	})
	a.ui.Ask(q)
	o := q.wait(ctx, a.gone)
	if o.By != ByUser {
		return cancelled
	}
	return o.Reply.Elicit
}

// ElicitURL checks the page a URL-mode elicitation asks the person to open: an http(s) URL with a
// host and without a user name or password, which would come before the host and can make a link
// read as another site's (https://github.com:443&login&...@evil.example/) in a question cut at its
// end.
func ElicitURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return nil, errors.New("not an http(s) URL")
	case u.User != nil:
		return nil, errors.New("it holds a user name before its host, which hides the site it opens")
	}
	return u, nil
}

// ShownURL is how a question names the page at u: its site first, in full, then the URL, cut at
// 500 characters; both escaped. A site whose name is not plain ASCII is shown percent-encoded and
// said to be so: "gіthub.com" with a Cyrillic і looks exactly like github.com.
func ShownURL(u *url.URL) string {
	host := u.Host
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			enc := strings.TrimPrefix((&url.URL{Host: host}).String(), "//")
			return fmt.Sprintf("a page on %s, whose name has letters that are not plain ASCII and can look like another site's (%s)",
				safetext.Line(u.Scheme+"://"+enc), safetext.Bounded(u.String(), 500))
		}
	}
	return fmt.Sprintf("a page on %s (%s)", safetext.Line(u.Scheme+"://"+host), safetext.Bounded(u.String(), 500))
}

// checkElicitReply checks a person's answer against the server's form: content only with accept,
// and then content that fits the form. The error quotes the server's titles and values, escaped.
func checkElicitReply(fields []mcpbridge.ElicitField, r mcpbridge.ElicitResult) error {
	switch r.Action {
	case mcpbridge.ElicitAccept:
		content := r.Content
		if content == nil {
			content = map[string]any{}
		}
		if err := mcpbridge.ValidateElicitation(fields, content); err != nil {
			return badRequest("%s", safetext.Bounded(err.Error(), maxElicitMessage))
		}
	case mcpbridge.ElicitDecline, mcpbridge.ElicitCancel:
		if len(r.Content) > 0 {
			return badRequest("content goes only with accept")
		}
	default:
		return badRequest("action must be accept, decline or cancel, not %q", r.Action)
	}
	return nil
}

// displayFields is the form as the person sees it: the server's labels with control and bidi
// characters escaped, so that a label cannot hide or disguise what the person picks. Names and
// values stay as they are: the front end sends them back.
func displayFields(fields []mcpbridge.ElicitField) []mcpbridge.ElicitField {
	out := make([]mcpbridge.ElicitField, len(fields))
	for i, f := range fields {
		f.Title = safetext.Bounded(f.Title, 200)
		if f.Title == "" && safetext.Bounded(f.Name, 200) != f.Name {
			f.Title = safetext.Bounded(f.Name, 200) // front ends show the name when there is no title
		}
		f.Description = safetext.Bounded(f.Description, 500)
		titles := make([]string, len(f.EnumTitles))
		for k, t := range f.EnumTitles {
			titles[k] = safetext.Bounded(t, 200)
		}
		if len(titles) > 0 {
			f.EnumTitles = titles
		}
		out[i] = f
	}
	return out
}

// maxElicitMessage bounds a server's message (in characters).
const maxElicitMessage = 2000

// RequestError is a request the person's front end got wrong (unknown server, bad entry, an
// answer that does not fit): the language server answers it as InvalidParams.
type RequestError struct{ Msg string }

func (e *RequestError) Error() string { return e.Msg }

func badRequest(format string, args ...any) error {
	return &RequestError{Msg: fmt.Sprintf(format, args...)}
}
