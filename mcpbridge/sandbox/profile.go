package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// NetMode says how far a sandboxed server may reach on the network.
type NetMode int

const (
	// NetNone: no network at all (a network namespace with nothing in it).
	NetNone NetMode = iota
	// NetDomains: only the listed domains, through the host's proxy.
	NetDomains
	// NetAll: the network as the user has it.
	NetAll
)

// Network is a profile's network part.
type Network struct {
	Mode NetMode
	// Domains, for NetDomains: lower-case host names, "*.example.com" wildcards (subdomains only,
	// not example.com itself) or IP literals, each optionally with ":port". An entry without a port
	// allows ports 80 and 443.
	Domains []string
}

// Profile is what a sandboxed server may touch beyond the default profile, as the config entry
// spells it: `"sandbox": true` is the zero Profile; `"sandbox": {"read": [...], "write": [...],
// "network": false | true | [...]}` adds to it. Paths are absolute, "~/..." (the home folder) or
// relative to the first workspace folder ("./build").
type Profile struct {
	Read    []string
	Write   []string
	Network Network
}

// Parse reads the value of a server entry's "sandbox" field. It returns nil, nil for false and
// null (no sandbox). Unknown keys are errors: a misspelt "wirte" must not silently widen nothing
// and leave the user believing they granted (or withheld) something.
func Parse(data []byte) (*Profile, error) {
	data = bytes.TrimSpace(data)
	switch string(data) {
	case "", "null", "false":
		return nil, nil
	case "true":
		return &Profile{}, nil
	}
	if len(data) == 0 || data[0] != '{' {
		return nil, errors.New(`sandbox: must be true, false or an object {"read": [...], "write": [...], "network": ...}`)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	var p Profile
	for key, val := range raw {
		switch key {
		case "read", "write":
			var list []string
			if err := json.Unmarshal(val, &list); err != nil {
				return nil, fmt.Errorf("sandbox: %s must be a list of paths", key)
			}
			if key == "read" {
				p.Read = list
			} else {
				p.Write = list
			}
		case "network":
			n, err := parseNetwork(val)
			if err != nil {
				return nil, err
			}
			p.Network = n
		default:
			return nil, fmt.Errorf("sandbox: unknown key %q (known: read, write, network)", safetext.Line(key))
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

func parseNetwork(val json.RawMessage) (Network, error) {
	switch string(bytes.TrimSpace(val)) {
	case "false", "null":
		return Network{Mode: NetNone}, nil
	case "true":
		return Network{Mode: NetAll}, nil
	}
	var list []string
	if err := json.Unmarshal(val, &list); err != nil {
		return Network{}, errors.New(`sandbox: network must be false, true or a list of domains like ["api.github.com", "*.example.com"]`)
	}
	if len(list) == 0 {
		return Network{Mode: NetNone}, nil
	}
	return Network{Mode: NetDomains, Domains: list}, nil
}

// Validate checks the profile's spelling (not the paths themselves: Resolve does that, where the
// folders are known).
func (p Profile) Validate() error {
	for _, f := range []struct {
		key   string
		paths []string
	}{{"read", p.Read}, {"write", p.Write}} {
		for i, path := range f.paths {
			if err := validPath(path); err != nil {
				return fmt.Errorf("sandbox: %s[%d] %q: %w", f.key, i, safetext.Line(path), err)
			}
		}
	}
	switch p.Network.Mode {
	case NetNone, NetAll:
		if len(p.Network.Domains) != 0 {
			return errors.New("sandbox: network domains given with a network mode that takes none")
		}
	case NetDomains:
		if len(p.Network.Domains) == 0 {
			return errors.New("sandbox: an empty domain list (say false for no network)")
		}
		for i, d := range p.Network.Domains {
			if err := validDomain(d); err != nil {
				return fmt.Errorf("sandbox: network[%d] %q: %w", i, safetext.Line(d), err)
			}
		}
	default:
		return fmt.Errorf("sandbox: unknown network mode %d", p.Network.Mode)
	}
	return nil
}

func validPath(p string) error {
	switch {
	case p == "":
		return errors.New("an empty path")
	case !safetext.Clean(p) || strings.ContainsRune(p, 0):
		return errors.New("a path with control or invisible characters")
	case strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/"):
		return errors.New(`"~user" paths are not supported; write the full path`)
	}
	return nil
}

// validDomain accepts host, *.host, host:port, an IP literal and [v6]:port.
func validDomain(d string) error {
	host, port := d, ""
	if h, p, err := net.SplitHostPort(d); err == nil {
		host, port = h, p
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return errors.New("a port must be 1-65535")
		}
	}
	if net.ParseIP(host) != nil {
		return nil
	}
	if host != strings.ToLower(host) {
		return errors.New("domains are written in lower case")
	}
	name := strings.TrimPrefix(host, "*.")
	if strings.Contains(name, "*") {
		return errors.New(`only a leading "*." wildcard is allowed ("*.example.com")`)
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 && name != "localhost" {
		return errors.New("not a domain name (a wildcard must name at least a registrable domain)")
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return errors.New("an empty or over-long label")
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Errorf("the character %q is not allowed in a domain", r)
			}
		}
	}
	return nil
}

// Canonical is the profile's form for the trust fingerprint: lists sorted and de-duplicated, the
// network spelt out. Two entries that allow the same things canonicalise alike; any loosening
// changes it (so a workspace server whose sandbox was widened asks for trust again).
func (p Profile) Canonical() string {
	norm := func(l []string) []string {
		out := slices.Clone(l)
		slices.Sort(out)
		out = slices.Compact(out)
		if out == nil {
			out = []string{}
		}
		return out
	}
	var network any // as the entry spells it, so that Parse reads the canonical form back
	switch p.Network.Mode {
	case NetNone:
		network = false
	case NetAll:
		network = true
	default:
		network = norm(p.Network.Domains)
	}
	b, _ := json.Marshal(struct { // ignore error: strings and lists only
		Read    []string `json:"read"`
		Write   []string `json:"write"`
		Network any      `json:"network"`
	}{norm(p.Read), norm(p.Write), network})
	return string(b)
}

// Describe is the one-line sentence a person sees in the trust prompt, `check` and the editors'
// server views: "sandboxed: no network, writes only its own folder". A listed path that makes
// git, an editor or a shell run code ([RunsCode]) is named apart ("also writes .git/hooks, which
// git, an editor or a shell runs code from outside the sandbox"). Everything in it is escaped.
func (p Profile) Describe() string {
	var parts []string
	switch p.Network.Mode {
	case NetNone:
		parts = append(parts, "no network")
	case NetAll:
		parts = append(parts, "full network")
	default:
		parts = append(parts, "network only "+list(p.Network.Domains))
	}
	// A path that git, an editor or a shell runs code from is said apart: within the others it
	// stays read-only, and listed by name it reaches past the sandbox.
	var plain, code []string
	for _, w := range p.Write {
		if _, ok := RunsCode(w); ok {
			code = append(code, w)
		} else {
			plain = append(plain, w)
		}
	}
	if len(plain) == 0 {
		parts = append(parts, "writes only its own folder")
	} else {
		parts = append(parts, "writes only "+list(plain)+" and its own folder")
	}
	if len(code) > 0 {
		parts = append(parts, "also writes "+list(code)+", which git, an editor or a shell runs code from outside the sandbox")
	}
	if len(p.Read) > 0 {
		parts = append(parts, "also reads "+list(p.Read))
	}
	return "sandboxed: " + strings.Join(parts, ", ")
}

func list(l []string) string {
	l = slices.Clone(l)
	slices.Sort(l)
	l = slices.Compact(l)
	for i := range l {
		l[i] = safetext.Line(l[i])
	}
	if len(l) == 1 {
		return l[0]
	}
	return strings.Join(l[:len(l)-1], ", ") + " and " + l[len(l)-1]
}

// Entry is the profile as a config entry writes it: `{"read": [...], "write": [...], "network":
// ...}` with empty parts left out (`{}` is the default profile).
func (p Profile) Entry() []byte {
	m := map[string]any{}
	if len(p.Read) > 0 {
		m["read"] = p.Read
	}
	if len(p.Write) > 0 {
		m["write"] = p.Write
	}
	switch p.Network.Mode {
	case NetAll:
		m["network"] = true
	case NetDomains:
		m["network"] = p.Network.Domains
	}
	b, _ := json.Marshal(m) // ignore error: strings and lists only
	return b
}
