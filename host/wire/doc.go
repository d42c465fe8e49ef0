// Package wire owns the editor <-> host contract: every method, command and notification name, and
// every struct that crosses the wire (params, results, notifications), with the contract document
// PROTOCOL.md beside this file. The language server decodes into and encodes from these types and
// converts to and from the application's own types at its edge; no wire type is an alias of a
// domain type, so a JSON tag changed elsewhere cannot change the contract.
//
// shapes.json, generated from these structs (go test ./host/wire -update), is what the editor
// integrations are tested against: the VS Code extension's lsp_types.ts and the Neovim plugin's
// protocol.lua.
//
// wire imports only the standard library. It must not import the application (host), session,
// permissions, mcpbridge or go.lsp.dev: a deps test guards it.
package wire
