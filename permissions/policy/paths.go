package policy

import (
	"path/filepath"
	"runtime"
)

// File names inside a policy directory; the same for Switchboard and Claude Code.
const (
	SettingsFile = "managed-settings.json"
	DropInDir    = "managed-settings.d"
	MCPFile      = "managed-mcp.json"
)

// Paths says where the policy sources are. Tests point them at temporary directories;
// DefaultPaths gives the real places.
type Paths struct {
	// Dir holds Switchboard's own managed-settings.json, managed-settings.d/*.json and
	// managed-mcp.json. Empty: no own policy.
	Dir string
	// ClaudeCodeDir holds Claude Code's files of the same names, imported restrict-only.
	ClaudeCodeDir string
	// VSCodePolicy is VS Code's policy file (Linux: /etc/vscode/policy.json), imported
	// restrict-only.
	VSCodePolicy string
	// Copilot lists managed-settings.json files that GitHub Copilot clients received by MDM; their
	// MCP keys are the same as Claude Code's and are imported restrict-only. There is no fixed
	// place for them, so the default is none.
	Copilot []string
	// ManagedPrefs is macOS's managed preferences folder (/Library/Managed Preferences): the
	// domains dev.switchboard and com.anthropic.claudecode (key Settings, the settings as a JSON
	// string) and com.microsoft.VSCode (one key per policy). Empty: not read.
	ManagedPrefs string
	// Registry reads the Windows registry's policies: HKLM\SOFTWARE\Policies\Switchboard and
	// ...\ClaudeCode (value Settings, the settings as a JSON string) and ...\Microsoft\VSCode (one
	// value per policy). Ignored elsewhere.
	Registry bool
}

// DefaultPaths are the places an administrator writes policy on this platform (design
// section 6.2).
func DefaultPaths() Paths {
	switch runtime.GOOS {
	case "darwin":
		return Paths{
			Dir:           "/Library/Application Support/Switchboard",
			ClaudeCodeDir: "/Library/Application Support/ClaudeCode",
			ManagedPrefs:  "/Library/Managed Preferences",
		}
	case "windows":
		pf := programFiles()
		return Paths{
			Dir:           filepath.Join(pf, "Switchboard"),
			ClaudeCodeDir: filepath.Join(pf, "ClaudeCode"),
			Registry:      true,
		}
	}
	return Paths{
		Dir:           "/etc/switchboard",
		ClaudeCodeDir: "/etc/claude-code",
		VSCodePolicy:  "/etc/vscode/policy.json",
	}
}

// watchDirs are the directories whose changes can change the policy.
func (p Paths) watchDirs() []string {
	var dirs []string
	for _, d := range []string{p.Dir, p.ClaudeCodeDir} {
		if d != "" {
			dirs = append(dirs, d, filepath.Join(d, DropInDir))
		}
	}
	if p.VSCodePolicy != "" {
		dirs = append(dirs, filepath.Dir(p.VSCodePolicy))
	}
	for _, f := range p.Copilot {
		dirs = append(dirs, filepath.Dir(f))
	}
	if p.ManagedPrefs != "" {
		dirs = append(dirs, p.ManagedPrefs)
	}
	return dirs
}
