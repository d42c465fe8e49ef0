package lsp

import (
	"context"
	"encoding/json"
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/switchboard-dev/switchboard/host"
)

// codeRequestFailed is LSP's RequestFailed (-32803, LSP 3.17): the request was valid (known
// command, good params) but could not be done; the message says why for the person. It is the
// answer to a provider that cannot list its models: InvalidParams would tell the editor it sent
// something wrong, InternalError that the host is broken, and neither is true.
const codeRequestFailed jsonrpc2.Code = -32803

// requestFailed answers the application's *host.UnavailableError as RequestFailed with its
// sentence as is; other errors pass through.
func requestFailed(err error) error {
	var ue *host.UnavailableError
	if errors.As(err, &ue) {
		return jsonrpc2.NewError(codeRequestFailed, ue.Msg)
	}
	return err
}

func (s *server) cmdModels(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	current, models, err := s.app.Models(ctx)
	if err != nil {
		return nil, requestFailed(err)
	}
	return wireModels(current, models), nil
}
