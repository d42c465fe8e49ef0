package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/session"
)

// UnavailableError is a valid request the application cannot do now (the provider cannot list
// its models, no provider is usable): Msg is one plain sentence for the person. The language
// server answers it as RequestFailed, not InvalidParams: nothing in the request was wrong.
type UnavailableError struct{ Msg string }

func (e *UnavailableError) Error() string { return e.Msg }

// MsgNoModelList is the person's sentence for a provider that cannot list its models.
const MsgNoModelList = "This provider cannot list its models."

// Model is one model a front end offers to pick: the id as the provider spells it (never
// escaped: it is what the setting gets), the display name escaped.
type Model struct {
	ID          string
	DisplayName string
	Created     int64
}

// modelNameLimit bounds a model's display name (characters).
const modelNameLimit = 80

// Models lists the current provider's models for a model picker, with the configured model's
// name. The provider's answer is outside data: a model whose id would need escaping (control or
// invisible characters) is left out, since no setting could name it honestly. Errors are
// *UnavailableError.
func (a *App) Models(ctx context.Context) (current string, models []Model, err error) {
	current, list, err := a.sessions.Models(ctx)
	switch {
	case errors.Is(err, session.ErrNoModelList):
		return current, nil, &UnavailableError{Msg: MsgNoModelList}
	case errors.Is(err, session.ErrNoProvider):
		return current, nil, &UnavailableError{Msg: "No model provider is usable; check the provider setting (" +
			safetext.Bounded(err.Error(), 300) + ")."}
	case ctx.Err() != nil:
		return current, nil, ctx.Err()
	case err != nil:
		return current, nil, &UnavailableError{Msg: fmt.Sprintf("Could not list the provider's models (%s).", safetext.Bounded(err.Error(), 300))}
	}
	models = make([]Model, 0, len(list))
	for _, m := range list {
		if m.ID == "" || !safetext.Clean(m.ID) {
			continue
		}
		models = append(models, Model{ID: m.ID, DisplayName: safetext.Bounded(m.DisplayName, modelNameLimit), Created: m.Created})
	}
	return current, models, nil
}
