//go:build windows

package policy

import (
	"encoding/json"
	"errors"

	"golang.org/x/sys/windows/registry"
)

// registryKeys are the policy keys under HKLM (only administrators can write under
// SOFTWARE\Policies, by Windows' own ACLs, so the keys need no check of their own). HKCU is
// never read for policy: the user writes it.
var registryKeys = map[string]string{
	FromSwitchboard: `SOFTWARE\Policies\Switchboard`,
	FromClaudeCode:  `SOFTWARE\Policies\ClaudeCode`,
	FromVSCode:      `SOFTWARE\Policies\Microsoft\VSCode`,
}

// readRegistry reads one product's policy key: Switchboard's and Claude Code's value Settings
// (the settings as a JSON string), VS Code's values one per policy.
func (b *builder) readRegistry(from string) {
	path := registryKeys[from]
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, path, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return
	}
	name := `HKLM\` + path
	src := &Source{Path: name, From: from, Import: from != FromSwitchboard, Owner: -1}
	if err != nil {
		b.brokenSource(src, &FileError{File: name, Msg: "cannot read: " + err.Error()})
		return
	}
	defer k.Close()
	if from != FromVSCode {
		s, _, err := k.GetStringValue("Settings")
		if errors.Is(err, registry.ErrNotExist) {
			return
		}
		if err != nil {
			b.brokenSource(src, &FileError{File: name, Msg: "cannot read Settings: " + err.Error()})
			return
		}
		src.Path = name + `\Settings`
		b.parse(src, []byte(s), KindSettings)
		return
	}
	m := map[string]any{}
	for _, v := range []string{"ChatMCP", "ChatToolsEligibleForAutoApproval", "AdminContactEmail", "AdminContactUrl", "McpGalleryServiceUrl"} {
		if s, _, err := k.GetStringValue(v); err == nil {
			m[v] = s
		}
	}
	if n, _, err := k.GetIntegerValue("ChatToolsAutoApprove"); err == nil {
		m["ChatToolsAutoApprove"] = n != 0
	}
	if len(m) == 0 {
		return
	}
	js, _ := json.Marshal(m) // ignore error: plain values
	b.parse(src, js, KindVSCode)
}
