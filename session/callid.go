package session

import "context"

// callIDKey carries the model's tool call being run (its turn and id) to Tools.Call.
type callIDKey struct{}

type callRef struct{ turn, id string }

// CallID is, inside Tools.Call, the id of the model's tool call being run (the id its toolCall
// and toolResult events carry); "" for a direct call. The host uses it to tie what it keeps of a
// call (an MCP App's view of the full result) to the chat events the editor sees.
func CallID(ctx context.Context) string {
	c, _ := ctx.Value(callIDKey{}).(callRef)
	return c.id
}

// CallTurn is, inside Tools.Call, the turn whose model's tool call is being run ("" for a direct
// call). A call id is the model's (or its provider's) to choose, so two turns running at once may
// use the same one: the turn and the id together name one call.
func CallTurn(ctx context.Context) string {
	c, _ := ctx.Value(callIDKey{}).(callRef)
	return c.turn
}

func withCallID(ctx context.Context, turn, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, callRef{turn: turn, id: id})
}
