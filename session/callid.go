package session

import "context"

// callIDKey carries the id of the model's tool call to Tools.Call.
type callIDKey struct{}

// CallID is, inside Tools.Call, the id of the model's tool call being run (the id its toolCall
// and toolResult events carry); "" for a direct call. The host uses it to tie what it keeps of a
// call (an MCP App's view of the full result) to the chat events the editor sees.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

func withCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}
