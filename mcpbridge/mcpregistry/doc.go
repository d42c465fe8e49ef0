// Package mcpregistry reads the MCP Registry's v0.1 API (registry.modelcontextprotocol.io, or an
// organisation's own registry of the same shape) and turns one server's server.json into a config
// entry: `switchboard mcp add --from-registry NAME[@VERSION]` (issue 33).
//
// Everything in a server.json is the publisher's, and a registry may be anyone's: a document is
// read with a size limit, a redirect to another host is refused, and a package is accepted only
// when what it would run can be said exactly and shown: an npm package runs as
// `npx -y IDENTIFIER@VERSION`, a PyPI one as `uvx IDENTIFIER==VERSION`, an OCI image as
// `docker run -i --rm [-e NAME]... IMAGE:TAG`, and a remote as its URL. The version must be exact
// (never "latest" or a range), the identifier a plain package name (never one that starts with
// "-", which npx or uvx would take as a flag of their own), a package registry other than the
// type's default is refused (npx and uvx would fetch from the default one anyway), and runtime
// arguments (flags for npx, uvx or docker themselves) are refused. Secret variables become
// ${input:ID} questions, never values in the file.
//
// The entry records where it came from ({"registry": {"url", "name", "version"}}). That is only a
// claim: Verify derives the launch again from the registry's server.json (as this process read
// it; never a copy on disk, which the user could forge) and requires the same command and
// arguments, the URL, and no environment variable or header the server.json does not declare,
// so a hand-edited entry fails. The host uses it for an organisation's
// `mcpAccess: "registry"`.
package mcpregistry
