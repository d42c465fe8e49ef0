// Package config reads the MCP server definitions: the configuration files and their formats
// (JSON with comments, the importers' foreign files), ${VAR} variables, VS Code's "inputs" and
// "envFile", the edits of `switchboard mcp add/remove`, and the sentences of the trust question
// (describe.go). Its result, [ServerConfig], is what mcpbridge's registry runs.
//
// [LoadConfig] reads, in order, the user file ($XDG_CONFIG_HOME/switchboard/mcp.json), each
// workspace folder's .vscode/mcp.json, .mcp.json and .switchboard/mcp.json, the extra files, then
// the servers handed in by the editor; a later definition replaces an earlier one server by
// server. Both "mcpServers" and "servers" top-level keys are read. ${VAR}, ${env:VAR} and
// ${VAR:-default} expand in command, args, env, cwd, url and headers (${workspaceFolder}: a
// workspace file's folder, elsewhere the one open folder; vars.go); an unset variable without a
// default is an error. An unknown key or a bad
// entry is a *ConfigError naming file, server and key, and only that entry is skipped (an
// earlier valid definition of the same server stays). A server whose winning definition comes
// from a workspace file is WorkspaceOnly (it needs the user's trust) unless a trusted source
// defined exactly the same thing; so is a user-level one that took ${workspaceFolder} from the
// open folder (FromFolder): what it runs comes from the repository.
//
// It sits below mcpbridge and mcpbridge/oauth and imports neither, nor mcpbridge/stdio, nor mcp-go:
// a configuration is checked without any protocol (deps_test.go). The values of "inputs" are kept
// in mcpbridge/tokenstore, which it imports.
package config
