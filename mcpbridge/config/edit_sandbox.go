package config

import (
	"fmt"
	"slices"

	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
	"github.com/tailscale/hujson"
)

// AllowSandbox widens the sandbox of server name in the config file at path: it adds read and
// write paths to the entry's "sandbox" (true becomes an object), knowingly, as the user asked
// after a refusal. Everything else in the file stays byte for byte (comments inside the old
// "sandbox" value are not kept). It refuses a server without a sandbox: adding one is a change
// of its own, made in the file. It returns the new profile.
func AllowSandbox(path, name string, read, write []string) (*sandbox.Profile, error) {
	var out *sandbox.Profile
	err := editFile(path, func(data []byte) ([]byte, error) {
		root, err := parseConfigFile(path, data)
		if err != nil {
			return nil, err
		}
		var entry *hujson.Object
		for _, key := range serverKeys {
			if obj := memberObject(root, key); obj != nil {
				if i := findMember(obj, name); i >= 0 {
					entry, _ = obj.Members[i].Value.Value.(*hujson.Object)
				}
			}
		}
		if entry == nil {
			return nil, fmt.Errorf("%s: %q: %w", path, name, ErrServerNotFound)
		}
		j := findMember(entry, "sandbox")
		if j < 0 {
			return nil, fmt.Errorf("%s: %q has no sandbox: add \"sandbox\": true to its entry first", path, name)
		}
		sv := entry.Members[j].Value
		std := sv.Clone()
		std.Standardize()
		p, err := sandbox.Parse(std.Pack())
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, name, err)
		}
		if p == nil {
			return nil, fmt.Errorf("%s: %q has its sandbox off: set \"sandbox\": true first", path, name)
		}
		for _, r := range read {
			if !slices.Contains(p.Read, r) {
				p.Read = append(p.Read, r)
			}
		}
		for _, w := range write {
			if !slices.Contains(p.Write, w) {
				p.Write = append(p.Write, w)
			}
		}
		if err := p.Validate(); err != nil {
			return nil, err
		}
		out = p
		edited := append(append(append([]byte(nil), data[:sv.StartOffset]...), p.Entry()...), data[sv.EndOffset:]...)
		return edited, nil
	})
	return out, err
}
