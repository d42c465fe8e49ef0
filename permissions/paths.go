package permissions

import (
	"os"
	"path/filepath"
)

// ConfigDir is $XDG_CONFIG_HOME/switchboard, or ~/.config/switchboard when XDG_CONFIG_HOME is
// unset or not absolute (as the XDG spec says relative values are ignored).
func ConfigDir() string { return xdgDir("XDG_CONFIG_HOME", ".config") }

// StateDir is $XDG_STATE_HOME/switchboard, or ~/.local/state/switchboard.
func StateDir() string { return xdgDir("XDG_STATE_HOME", filepath.Join(".local", "state")) }

// DefaultAllowlistPath is ConfigDir()/allow_tool.
func DefaultAllowlistPath() string { return filepath.Join(ConfigDir(), "allow_tool") }

// DefaultTrustPath is ConfigDir()/trust.json.
func DefaultTrustPath() string { return filepath.Join(ConfigDir(), "trust.json") }

// DefaultAuditPath is StateDir()/audit.jsonl.
func DefaultAuditPath() string { return filepath.Join(StateDir(), "audit.jsonl") }

func xdgDir(env, fallback string) string {
	if d := os.Getenv(env); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "switchboard")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		// No home: fall back to a path relative to the working directory rather than "/".
		return filepath.Join(fallback, "switchboard")
	}
	return filepath.Join(home, fallback, "switchboard")
}
