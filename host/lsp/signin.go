package lsp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/host/wire"
)

var _ host.URLOpener = (*server)(nil)

// OpenURL is host.URLOpener: window/showDocument with external, so the editor hands the page to
// the person's browser.
func (s *server) OpenURL(ctx context.Context, u string) error {
	var shown struct {
		Success bool `json:"success"`
	}
	if err := s.conn.call(ctx, wire.MethodShowDocument, map[string]any{"uri": u, "external": true, "takeFocus": true}, &shown); err != nil {
		return err
	}
	if !shown.Success {
		return errors.New("the editor did not open the page")
	}
	return nil
}

func (s *server) signInArg(cmd string, arg json.RawMessage) (string, error) {
	var p wire.SignInParams
	if err := decodeArg(cmd, arg, &p); err != nil {
		return "", err
	}
	if p.Server == "" {
		return "", lspconn.InvalidParams("%s: server is required", cmd)
	}
	return p.Server, nil
}

// cmdSignIn runs a server's sign-in and answers when it ended (the browser came back, or not).
func (s *server) cmdSignIn(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	name, err := s.signInArg(wire.CmdSignIn, arg)
	if err != nil {
		return nil, err
	}
	res, err := s.app.SignIn(ctx, name)
	if err != nil {
		return nil, err
	}
	return wireStatuses(res), nil
}

func (s *server) cmdSignOut(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	name, err := s.signInArg(wire.CmdSignOut, arg)
	if err != nil {
		return nil, err
	}
	res, err := s.app.SignOut(ctx, name)
	if err != nil {
		return nil, err
	}
	return wireStatuses(res), nil
}
