package config

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxServerNameLen is the longest server name. It keeps "mcp__<server>__" (39 characters at most)
// well inside the 55 characters a name made safe keeps (see [hashedName]), so that cutting a long
// name never cuts into the server part.
const MaxServerNameLen = 32

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// ValidServerName reports whether name may name a server: it matches ^[A-Za-z0-9][A-Za-z0-9_-]*$,
// is at most [MaxServerNameLen] characters, has no "__" and does not end in "_". Then the first
// "__" after "mcp__" in a tool name is always the separator, so a tool name has exactly one server.
func ValidServerName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("server name is empty")
	case !serverNameRE.MatchString(name):
		return fmt.Errorf("server name %q must start with a letter or digit and contain only letters, digits, '_' and '-'", name)
	case len(name) > MaxServerNameLen:
		return fmt.Errorf("server name %q is longer than %d characters", name, MaxServerNameLen)
	case strings.Contains(name, "__"):
		return fmt.Errorf("server name %q must not contain \"__\" (it separates server and tool in mcp__<server>__<tool>)", name)
	case strings.HasSuffix(name, "_"):
		return fmt.Errorf("server name %q must not end in '_' (mcp__%s__<tool> would read as another server's tool)", name, name)
	}
	return nil
}
