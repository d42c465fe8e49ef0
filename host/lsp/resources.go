package lsp

import (
	"context"
	"encoding/json"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// The resources and prompts commands (PROTOCOL.md section 7) and switchboard/resourcesChanged.

var _ host.ResourceUI = (*server)(nil)

// ResourcesChanged is host.ResourceUI: switchboard/resourcesChanged.
func (s *server) ResourcesChanged(ev mcpbridge.ResourceEvent) {
	s.conn.sendJSON(wire.NotifyResourcesChanged, wire.ResourcesChangedParams{Server: ev.Server, Kind: ev.Kind, URI: ev.URI})
}

func (s *server) cmdResources(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ResourcesParams
	if err := decodeArg(wire.CmdResources, arg, &p); err != nil {
		return nil, err
	}
	rs, ts, err := s.app.Resources(ctx, p.Server)
	if err != nil {
		return nil, err
	}
	out := wire.ResourcesResult{Resources: make([]wire.Resource, len(rs)), Templates: make([]wire.ResourceTemplate, len(ts))}
	for i, r := range rs {
		out.Resources[i] = wire.Resource(r)
	}
	for i, t := range ts {
		out.Templates[i] = wire.ResourceTemplate(t)
	}
	return out, nil
}

func (s *server) cmdReadResource(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ReadResourceParams
	if err := decodeArg(wire.CmdReadResource, arg, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, lspconn.InvalidParams("%s: uri is required", wire.CmdReadResource)
	}
	res, err := s.app.ReadResource(ctx, p.Server, p.URI, p.Subscribe)
	if err != nil {
		return nil, err
	}
	out := wire.ReadResourceResult{Server: res.Server, URI: res.URI, Contents: make([]wire.ResourceContent, len(res.Contents))}
	for i, c := range res.Contents {
		out.Contents[i] = wire.ResourceContent(c)
	}
	return out, nil
}

func (s *server) cmdUnsubscribe(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.UnsubscribeParams
	if err := decodeArg(wire.CmdUnsubscribe, arg, &p); err != nil {
		return nil, err
	}
	if err := s.app.Unsubscribe(ctx, p.Server, p.URI); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func (s *server) cmdPrompts(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ResourcesParams
	if err := decodeArg(wire.CmdPrompts, arg, &p); err != nil {
		return nil, err
	}
	ps, err := s.app.Prompts(ctx, p.Server)
	if err != nil {
		return nil, err
	}
	out := make([]wire.Prompt, len(ps))
	for i, pr := range ps {
		args := make([]wire.PromptArgument, len(pr.Arguments))
		for j, a := range pr.Arguments {
			args[j] = wire.PromptArgument(a)
		}
		out[i] = wire.Prompt{Server: pr.Server, Name: pr.Name, Title: pr.Title, Description: pr.Description, Arguments: args}
	}
	return out, nil
}

func (s *server) cmdGetPrompt(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.GetPromptParams
	if err := decodeArg(wire.CmdGetPrompt, arg, &p); err != nil {
		return nil, err
	}
	if p.Server == "" || p.Name == "" {
		return nil, lspconn.InvalidParams("%s: server and name are required", wire.CmdGetPrompt)
	}
	res, err := s.app.GetPrompt(ctx, p.Server, p.Name, p.Arguments)
	if err != nil {
		return nil, err
	}
	out := wire.GetPromptResult{Server: res.Server, Name: res.Name, Description: res.Description, Truncated: res.Truncated,
		Messages: make([]wire.PromptMessage, len(res.Messages))}
	for i, m := range res.Messages {
		out.Messages[i] = wire.PromptMessage{Role: m.Role, Text: m.Text, Content: m.Content}
	}
	return out, nil
}

func (s *server) cmdComplete(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.CompleteParams
	if err := decodeArg(wire.CmdComplete, arg, &p); err != nil {
		return nil, err
	}
	if p.Server == "" || p.Argument == "" || (p.Prompt == "") == (p.Template == "") {
		return nil, lspconn.InvalidParams("%s: server, argument and one of prompt or template are required", wire.CmdComplete)
	}
	vals, err := s.app.Complete(ctx, host.CompleteRequest{Server: p.Server, Prompt: p.Prompt, Template: p.Template,
		Argument: p.Argument, Value: p.Value, Context: p.Context})
	if err != nil {
		return nil, err
	}
	return wire.CompleteResult{Values: vals}, nil
}

// chatAttachments converts switchboard.chat's attachments and serverPrompt.
func chatAttachments(p wire.ChatParams) ([]host.ResourceRef, *host.PromptCall, error) {
	var refs []host.ResourceRef
	for _, a := range p.Attachments {
		if a.URI == "" {
			return nil, nil, lspconn.InvalidParams("%s: every attachment needs a uri", wire.CmdChat)
		}
		refs = append(refs, host.ResourceRef{Server: a.Server, URI: a.URI})
	}
	var call *host.PromptCall
	if sp := p.ServerPrompt; sp != nil {
		if sp.Server == "" || sp.Name == "" {
			return nil, nil, lspconn.InvalidParams("%s: serverPrompt needs server and name", wire.CmdChat)
		}
		call = &host.PromptCall{Server: sp.Server, Name: sp.Name, Arguments: sp.Arguments}
	}
	return refs, call, nil
}
