package policy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// ownKeys are the keys of Switchboard's managed-settings.json (the Claude Code / Copilot keys
// plus Switchboard's own).
var ownKeys = []string{
	"allowedMcpServers", "deniedMcpServers", "allowManagedMcpServersOnly", "permissions",
	"allowManagedPermissionRulesOnly", "disabledModes", "pinning", "workspaceServers", "sampling",
	"sharedServers", "mcpAccess", "mcpRegistryUrl", "mcpSandbox", "adminContact", "inheritPolicies",
	"$schema",
}

// settings reads one managed-settings.json (or drop-in) object.
func (f *fileParse) settings(root *node) {
	if !f.want(root, 'o', "the file", "an object") {
		return
	}
	imp := f.src.Import
	for i, k := range root.keys {
		v := root.vals[i]
		switch k {
		case "allowedMcpServers":
			f.serverList(v, true)
		case "deniedMcpServers":
			f.serverList(v, false)
		case "allowManagedMcpServersOnly":
			if f.want(v, 'b', k, "true or false") && v.b {
				f.b.p.managedOnly = firstRule(f.b.p.managedOnly, f.rule(v))
				f.contributed("allowManagedMcpServersOnly")
			}
		case "allowManagedPermissionRulesOnly":
			if f.want(v, 'b', k, "true or false") && v.b {
				f.b.p.managedRules = firstRule(f.b.p.managedRules, f.rule(v))
				f.contributed("allowManagedPermissionRulesOnly")
			}
		case "permissions":
			f.permissions(v)
		default:
			if imp {
				continue // the rest of Claude Code's settings is not about MCP
			}
			switch k {
			case "disabledModes":
				if !f.want(v, 'a', k, "an array of mode names") {
					continue
				}
				for _, e := range v.vals {
					if f.want(e, 's', k, "a mode name") {
						if !slices.Contains(knownModes, e.str) {
							f.errf(e, "unknown mode %q (want %s)", e.str, strings.Join(knownModes, ", "))
							continue
						}
						f.disableMode(e.str, f.rule(e))
					}
				}
			case "pinning", "workspaceServers", "sampling", "sharedServers", "mcpAccess", "mcpSandbox":
				if f.want(v, 's', k, "a string") {
					f.restrict(k, v.str, v)
				}
			case "adminContact":
				if !f.want(v, 'o', k, "an object {email, url}") {
					continue
				}
				for j, ck := range v.keys {
					cv := v.vals[j]
					if (ck != "email" && ck != "url") || !f.want(cv, 's', "adminContact."+ck, "a string") {
						if ck != "email" && ck != "url" {
							f.errf(cv, "adminContact has email and url, not %q", ck)
						}
						continue
					}
					f.contact(ck, cv.str)
				}
			case "mcpRegistryUrl":
				if !f.want(v, 's', k, "a string (the registry's https URL)") {
					continue
				}
				if u, err := url.Parse(v.str); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
					f.errf(v, "mcpRegistryUrl %q is not a registry URL (https://host[/path])", v.str)
					continue
				}
				if f.b.p.registryRule == nil {
					f.b.p.registryURL, f.b.p.registryRule = v.str, f.rule(v)
					f.contributed("mcpRegistryUrl (the registry for mcp add --from-registry and mcpAccess registry)")
				}
			case "inheritPolicies":
				if f.want(v, 'b', k, "true or false") && !v.b {
					f.b.p.inheritOffRule = firstRule(f.b.p.inheritOffRule, f.rule(v))
					f.contributed("inheritPolicies: false (no imports)")
				}
			case "$schema":
			default:
				f.warn("%s: unknown key %q is ignored (known: %s)", f.src.Path, k, strings.Join(ownKeys, ", "))
			}
		}
	}
}

func firstRule(have, r *Rule) *Rule {
	if have != nil {
		return have
	}
	return r
}

func (f *fileParse) contact(kind, v string) {
	c := &f.b.p.contact
	switch {
	case kind == "email" && c.Email == "":
		c.Email = v
	case kind == "url" && c.URL == "":
		c.URL = v
	default:
		return
	}
	f.contributed("adminContact %s", kind)
}

func (f *fileParse) disableMode(mode string, r *Rule) {
	if _, ok := f.b.p.disabledModes[mode]; !ok {
		f.b.p.disabledModes[mode] = r
	}
	f.contributed("mode %s disabled", mode)
}

// restrict merges a restriction with a scale: the most restrictive value of every source wins.
func (f *fileParse) restrict(key, val string, n *node) {
	order := restrictOrder[key]
	rank, ok := order[val]
	if !ok {
		var vals []string
		for v := range order {
			vals = append(vals, v)
		}
		slices.Sort(vals)
		f.errf(n, "%s must be one of %s, not %q", key, strings.Join(vals, ", "), val)
		return
	}
	p := f.b.p
	r := f.rule(n)
	set := func(cur *string, curRule **Rule) {
		if *curRule == nil || rank < order[*cur] {
			*cur, *curRule = val, r
		}
	}
	switch key {
	case "mcpAccess":
		set(&p.mcpAccess, &p.mcpAccessRule)
	case "sharedServers":
		set(&p.shared, &p.sharedRule)
	case "pinning":
		set(&p.pinning, &p.pinningRule)
	case "workspaceServers":
		if val == "deny" {
			p.workspaceDeny = firstRule(p.workspaceDeny, r)
		}
	case "sampling":
		if val == "deny" {
			p.samplingDeny = firstRule(p.samplingDeny, r)
		}
	case "mcpSandbox":
		if val == "required" {
			p.sandboxRule = firstRule(p.sandboxRule, r)
		}
	}
	f.contributed("%s %s", key, val)
}

// serverList reads allowedMcpServers or deniedMcpServers.
func (f *fileParse) serverList(v *node, allow bool) {
	key := "deniedMcpServers"
	if allow {
		key = "allowedMcpServers"
	}
	if !f.want(v, 'a', key, "an array of {serverName}, {serverCommand} or {serverUrl} entries") {
		return
	}
	var list []serverRule
	for _, e := range v.vals {
		if sr, ok := f.serverEntry(e); ok {
			list = append(list, sr)
		}
	}
	f.contributed("%s (%d entries)", key, len(v.vals))
	p := f.b.p
	if !allow {
		p.denied = append(p.denied, list...)
		for _, sr := range list {
			if sr.name != "" {
				f.warn("%s (%s) denies by name only: a stdio server with another name, or an HTTP server, running the same thing is not denied; add a serverCommand or serverUrl entry", sr.rule.Loc(), sr.rule.Text)
			}
		}
		return
	}
	// One allowlist per product: a Claude Code allowlist narrows Switchboard's, never widens it.
	al := f.b.layers[f.src.From]
	if al == nil {
		al = &allowlist{from: f.src.From, key: f.rule(v)}
		f.b.layers[f.src.From] = al
	}
	al.entries = append(al.entries, list...)
	for _, sr := range list {
		al.hasCmd = al.hasCmd || sr.command != nil
		al.hasURL = al.hasURL || sr.url != ""
	}
}

func (f *fileParse) serverEntry(e *node) (serverRule, bool) {
	if !f.want(e, 'o', "an entry", "an object") {
		return serverRule{}, false
	}
	if len(e.keys) != 1 {
		f.errf(e, "an entry has exactly one of serverName, serverCommand or serverUrl (it has %d members)", len(e.keys))
		return serverRule{}, false
	}
	sr := serverRule{rule: f.rule(e)}
	v := e.vals[0]
	switch e.keys[0] {
	case "serverName":
		if !f.want(v, 's', "serverName", "a string") {
			return sr, false
		}
		if err := validServerName(v.str); err != nil {
			f.errf(v, "%v", err)
			return sr, false
		}
		sr.name = v.str
	case "serverCommand":
		if !f.want(v, 'a', "serverCommand", "an array of strings (the command and its arguments)") {
			return sr, false
		}
		if len(v.vals) == 0 {
			f.errf(v, "serverCommand is empty: it needs at least the command")
			return sr, false
		}
		sr.command = []string{}
		for _, a := range v.vals {
			if !f.want(a, 's', "serverCommand", "an array of strings") {
				return sr, false
			}
			sr.command = append(sr.command, a.str)
		}
		if sr.command[0] == "" {
			f.errf(v.vals[0], "serverCommand has an empty command")
			return sr, false
		}
	case "serverUrl":
		if !f.want(v, 's', "serverUrl", "a string") {
			return sr, false
		}
		if _, err := url.Parse(strings.ReplaceAll(v.str, "*", "x")); err != nil || !strings.Contains(v.str, "://") {
			f.errf(v, "serverUrl %q is not a URL pattern (scheme://host/path, * matches any text)", v.str)
			return sr, false
		}
		if !asciiHost(v.str) {
			f.warn("%s (%s): the host is not plain ASCII, so no address matches it (the transport dials its ASCII form); write the host as its xn-- name", f.rule(e).Loc(), f.rule(e).Text)
		}
		sr.url = v.str
	default:
		f.errf(e, "unknown member %q (want serverName, serverCommand or serverUrl)", e.keys[0])
		return sr, false
	}
	return sr, true
}

// permissions reads permissions.allow / ask / deny and disableBypassPermissionsMode.
func (f *fileParse) permissions(v *node) {
	if !f.want(v, 'o', "permissions", "an object") {
		return
	}
	for i, k := range v.keys {
		lv := v.vals[i]
		switch k {
		case "allow", "ask", "deny":
			if !f.want(lv, 'a', "permissions."+k, "an array of rules") {
				continue
			}
			if k == "allow" && f.src.Import {
				if len(lv.vals) > 0 {
					f.warn("%s: permissions.allow is not imported: imports only narrow", f.rule(lv).Loc())
				}
				continue
			}
			n := 0
			for _, e := range lv.vals {
				if f.want(e, 's', "permissions."+k, "an array of strings") && f.toolRule(k, e) {
					n++
				}
			}
			if n > 0 {
				f.contributed("permissions.%s (%d rules)", k, n)
			}
		case "disableBypassPermissionsMode":
			if f.want(lv, 's', "permissions."+k, `"disable"`) {
				if lv.str != "disable" {
					f.errf(lv, `permissions.disableBypassPermissionsMode must be "disable", not %q`, lv.str)
					continue
				}
				f.disableMode(ModeAlwaysAllow, f.rule(lv))
			}
		default:
			if !f.src.Import {
				f.warn("%s: unknown key permissions.%s is ignored", f.src.Path, k)
			}
		}
	}
}

// toolRule parses one permission rule into the policy; false when it was not taken.
func (f *fileParse) toolRule(kind string, e *node) bool {
	tr, ok, err := parseToolRule(e.str)
	switch {
	case err != nil:
		f.errf(e, "permissions.%s: %v", kind, err)
		return false
	case !ok:
		f.warn("%s: %q is a Claude Code rule for its own tools; Switchboard ignores it", f.rule(e).Loc(), e.str)
		return false
	case tr.server == "*" && kind == "allow":
		f.errf(e, "permissions.allow: %q would grant every MCP tool; name servers (mcp__<server>__*)", e.str)
		return false
	case tr.server == "" && f.src.Import:
		f.warn("%s: %q names a %s tool, not an MCP tool; Switchboard ignores it", f.rule(e).Loc(), e.str, f.src.From)
		return false
	}
	tr.rule = f.rule(e)
	m := map[string]map[string][]toolRule{"allow": f.b.p.toolAllow, "ask": f.b.p.toolAsk, "deny": f.b.p.toolDeny}[kind]
	key := strings.ToLower(tr.server)
	m[key] = append(m[key], tr)
	return true
}

// managedMCP reads a managed-mcp.json: {"mcpServers": {name: entry}}. An empty map means no MCP.
func (f *fileParse) managedMCP(root *node) {
	if !f.want(root, 'o', "the file", "an object") {
		return
	}
	servers := root.get("mcpServers")
	if servers == nil {
		f.errf(root, `managed-mcp.json needs "mcpServers" (an empty object disables MCP)`)
		return
	}
	if !f.want(servers, 'o', "mcpServers", "an object of servers by name") {
		return
	}
	set := exclusiveSet{rule: f.rule(servers), servers: map[string]ManagedServer{}}
	set.rule.Text = "managed-mcp.json"
	for i, name := range servers.keys {
		e := servers.vals[i]
		if err := validServerName(name); err != nil {
			f.errf(e, "%v", err)
			continue
		}
		if !f.want(e, 'o', "mcpServers."+name, "an object") {
			continue
		}
		for _, key := range []string{"env", "headers"} {
			if m := e.get(key); m != nil && m.kind == 'o' {
				for j, k := range m.keys {
					if v := m.vals[j]; v.kind == 's' && v.str != "" && !strings.Contains(v.str, "${") {
						// Policy files are world-readable: a secret belongs in the user's environment.
						f.warn("%s: %s %s holds a literal value; a policy file is readable by every user, so put secrets in ${env:%s}", f.rule(v).Loc(), key, k, k)
					}
				}
			}
		}
		set.servers[name] = ManagedServer{Name: name, Config: json.RawMessage(f.p.data[e.off:f.end(e)]), Rule: f.rule(e)}
	}
	f.b.p.exclusive = append(f.b.p.exclusive, set)
	if len(set.servers) == 0 {
		f.contributed("managed-mcp.json: no servers (MCP is off)")
	} else {
		f.contributed("managed-mcp.json: %d servers, and no others", len(set.servers))
	}
}

// vscode reads VS Code's policy.json: a flat object of policy names.
func (f *fileParse) vscode(root *node) {
	if !f.want(root, 'o', "the file", "an object") {
		return
	}
	for i, k := range root.keys {
		v := root.vals[i]
		switch k {
		case "ChatMCP":
			// chat.mcp.access: "none" | "registry" | "all"; older builds took a boolean.
			switch {
			case v.kind == 'b' && v.b:
				f.restrict("mcpAccess", "all", v)
			case v.kind == 'b':
				f.restrict("mcpAccess", "none", v)
			case f.want(v, 's', k, `"none", "registry" or "all"`):
				f.restrict("mcpAccess", v.str, v)
			}
		case "ChatToolsAutoApprove":
			if f.want(v, 'b', k, "true or false") && !v.b {
				f.disableMode(ModeAlwaysAllow, f.rule(v))
			}
		case "ChatToolsEligibleForAutoApproval":
			f.eligible(v)
		case "AdminContactEmail", "AdminContactUrl":
			if f.want(v, 's', k, "a string") {
				f.contact(map[string]string{"AdminContactEmail": "email", "AdminContactUrl": "url"}[k], v.str)
			}
		case "McpGalleryServiceUrl":
			if f.want(v, 's', k, "a string") && f.b.p.gallery == "" {
				f.b.p.gallery, f.b.p.galleryRule = v.str, f.rule(v)
				f.contributed("McpGalleryServiceUrl (the registry for mcp add --from-registry and mcpAccess registry)")
			}
		}
	}
}

// eligible maps ChatToolsEligibleForAutoApproval {tool: false} to permissions.ask for the tools
// whose ids are MCP names. The registry and Windows policies carry the object as a JSON string.
func (f *fileParse) eligible(v *node) {
	obj := v
	if v.kind == 's' {
		q := &parser{file: f.p.file, data: []byte(v.str), lines: []int{0}}
		n, err := q.value(v.ptr, 0)
		if err != nil || n.kind != 'o' {
			f.errf(v, "ChatToolsEligibleForAutoApproval must be an object {tool: false} (or that object as a JSON string)")
			return
		}
		obj = n
		for _, c := range n.vals {
			c.off = v.off // positions inside the string: point at the string
		}
	}
	if !f.want(obj, 'o', "ChatToolsEligibleForAutoApproval", "an object {tool: false}") {
		return
	}
	for i, tool := range obj.keys {
		b := obj.vals[i]
		if b.kind != 'b' || b.b {
			continue
		}
		tr, ok, err := parseToolRule(tool)
		if err != nil || !ok || tr.server == "" {
			f.warn("%s: ChatToolsEligibleForAutoApproval %q is not an MCP tool name mcp__<server>__<tool>; Switchboard ignores it", f.src.Path, tool)
			continue
		}
		tr.rule = &Rule{File: f.src.Path, Pointer: v.ptr + "/" + escapePointer(tool), From: f.src.From, Text: fmt.Sprintf("{%q:false}", tool)}
		tr.rule.Line, tr.rule.Col = f.p.pos(b.off)
		key := strings.ToLower(tr.server)
		f.b.p.toolAsk[key] = append(f.b.p.toolAsk[key], tr)
		f.contributed("ChatToolsEligibleForAutoApproval %s: always asks", tool)
	}
}
