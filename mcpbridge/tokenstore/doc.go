// Package tokenstore keeps the OAuth sign-ins of MCP servers ([Credential]): in the OS
// keychain where one answers (Secret Service on Linux, Keychain on macOS, Credential Manager on
// Windows, through github.com/zalando/go-keyring), else in a file only the user can read,
// $XDG_STATE_HOME/switchboard/oauth-tokens.json (0600, in a 0700 directory). Nothing else in
// Switchboard writes a token anywhere.
//
// It owns the store vocabulary ([Store], [Credential], [ErrNoCredential], the in-memory [Memory])
// so that both mcpbridge/config (the values of "inputs" live in the same store) and
// mcpbridge/oauth (sign-ins) can use it: it sits below every other mcpbridge package and imports
// none of them (deps_test.go), nor host, session, permissions or go.lsp.dev.
package tokenstore
