// Package oauth signs a person in to an HTTP or SSE MCP server (the MCP authorization flow of
// revision 2025-11-25, signin.go): the 401's WWW-Authenticate, protected resource metadata
// (RFC 9728) and authorization server metadata (RFC 8414 or OpenID discovery, discovery.go), the
// client (a configured oauth.clientId, a client ID metadata document, or dynamic registration,
// RFC 7591, register.go), authorization code with PKCE S256, state and the RFC 9207 iss checked,
// the resource (RFC 8707) on every request, and a loopback listener that takes one callback. The
// credential goes to a tokenstore.Store; [Bearer] then puts its access token on the requests to
// that server's origin only (origin.go), refreshes it, and says when the person must sign in
// again. oauth-client-metadata.json is Switchboard's client metadata document (CIMD) to host.
//
// The registry drives it (mcpbridge's Registry.SignIn and SignOut, and a Bearer per connection).
// It reads the "oauth" object of mcpbridge/config and keeps credentials in mcpbridge/tokenstore;
// it must not import mcpbridge (which imports it) nor mcpbridge/stdio, nor host, session,
// permissions or go.lsp.dev (deps_test.go). It uses mcp-go's OAuth handler for discovery,
// registration and the code exchange.
package oauth
