package mcpregistry

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Response is the body of GET /v0.1/servers/{name}/versions/{version}: the server.json and the
// registry's own metadata.
type Response struct {
	Server Server                     `json:"server"`
	Meta   map[string]json.RawMessage `json:"_meta,omitempty"`
}

// officialMeta is the registry's metadata key (status: active, deprecated or deleted).
const officialMeta = "io.modelcontextprotocol.registry/official"

// Status is the registry's status of this version ("active", "deprecated", "deleted"; "" when
// the registry does not say).
func (r *Response) Status() string {
	var m struct {
		Status string `json:"status"`
	}
	if raw, ok := r.Meta[officialMeta]; ok {
		json.Unmarshal(raw, &m) // ignore error: a registry without the key says nothing
	}
	return m.Status
}

// Server is a server.json (schema 2025-09-29 and later, the v0.1 API's).
type Server struct {
	Name        string    `json:"name"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description"`
	Version     string    `json:"version"`
	WebsiteURL  string    `json:"websiteUrl,omitempty"`
	Packages    []Package `json:"packages,omitempty"`
	Remotes     []Remote  `json:"remotes,omitempty"`
}

// Package is one entry of packages[]: an npm, PyPI, NuGet, OCI or MCPB package.
type Package struct {
	RegistryType         string     `json:"registryType"`
	RegistryBaseURL      string     `json:"registryBaseUrl,omitempty"`
	Identifier           string     `json:"identifier"`
	Version              string     `json:"version,omitempty"`
	RuntimeHint          string     `json:"runtimeHint,omitempty"`
	Transport            Remote     `json:"transport"`
	RuntimeArguments     []Argument `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument `json:"packageArguments,omitempty"`
	EnvironmentVariables []KeyValue `json:"environmentVariables,omitempty"`
	FileSha256           string     `json:"fileSha256,omitempty"`
}

// Remote is a transport: a package's ({"type": "stdio"}) or one of remotes[]
// ("streamable-http" or "sse" with a URL and headers).
type Remote struct {
	Type    string     `json:"type"`
	URL     string     `json:"url,omitempty"`
	Headers []KeyValue `json:"headers,omitempty"`
}

// Argument is a positional or named argument of packageArguments or runtimeArguments.
type Argument struct {
	Type        string                     `json:"type"` // positional | named
	Name        string                     `json:"name,omitempty"`
	Value       string                     `json:"value,omitempty"`
	ValueHint   string                     `json:"valueHint,omitempty"`
	Default     string                     `json:"default,omitempty"`
	Description string                     `json:"description,omitempty"`
	IsRequired  bool                       `json:"isRequired,omitempty"`
	IsRepeated  bool                       `json:"isRepeated,omitempty"`
	IsSecret    bool                       `json:"isSecret,omitempty"`
	Variables   map[string]json.RawMessage `json:"variables,omitempty"`
}

// KeyValue is an environment variable or a header.
type KeyValue struct {
	Name        string                     `json:"name"`
	Description string                     `json:"description,omitempty"`
	Value       string                     `json:"value,omitempty"`
	Default     string                     `json:"default,omitempty"`
	IsRequired  bool                       `json:"isRequired,omitempty"`
	IsSecret    bool                       `json:"isSecret,omitempty"`
	Choices     []string                   `json:"choices,omitempty"`
	Variables   map[string]json.RawMessage `json:"variables,omitempty"`
}

// nameRE is server.json's name pattern: a reverse-DNS namespace, one slash, a name.
var nameRE = lazyRE(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// CheckName says whether name is a registry server name (what the schema allows: no spaces,
// control or bidi characters, exactly one slash).
func CheckName(name string) error {
	ns, short, _ := strings.Cut(name, "/")
	// ".." as a namespace or name matches the pattern; as a path segment it would not stay one.
	if len(name) < 3 || len(name) > 200 || !nameRE().MatchString(name) || strings.Trim(ns, ".") == "" || strings.Trim(short, ".") == "" {
		return fmt.Errorf("%q is not an MCP Registry server name (namespace/name, as io.github.owner/server)", name)
	}
	return nil
}

// versionRE is what an exact version may hold: no range operators, spaces or wildcards.
var versionRE = lazyRE(`^[0-9A-Za-z][0-9A-Za-z.+_-]{0,127}$`)

// CheckVersion says whether v names one version exactly: not "latest", not a range (^1.2,
// ~1.2, >=1, 1.x, 1.*, "1 || 2"), not a tag an npm or PyPI publisher can move.
func CheckVersion(v string) error {
	bad := fmt.Errorf("version %q is not an exact version (a range, a wildcard or a tag such as \"latest\" could run something else tomorrow)", v)
	if !versionRE().MatchString(v) {
		return bad
	}
	switch strings.ToLower(v) {
	case "latest", "next", "stable", "beta", "alpha", "canary", "head", "main", "master":
		return bad
	}
	core, _, _ := strings.Cut(v, "+")
	core, _, _ = strings.Cut(core, "-")
	for _, part := range strings.Split(core, ".") {
		switch strings.ToLower(part) {
		case "x", "":
			return bad
		}
	}
	if v[0] < '0' || v[0] > '9' {
		if !(len(v) > 1 && (v[0] == 'v' || v[0] == 'V') && v[1] >= '0' && v[1] <= '9') {
			return bad // a dist-tag, not a version
		}
	}
	return nil
}
