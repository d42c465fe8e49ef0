package mcpregistry

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// Plan is what a server.json becomes: the config entry, the inputs it asks for, and what to
// show the person before it is written.
type Plan struct {
	Entry  config.Entry
	Inputs []config.Input
	// Kind is what was chosen: "npm", "pypi", "oci" or the remote's transport.
	Kind string
	// Optional are the variables the server.json declares but does not need (not written).
	Optional []KeyValue
}

// Default package registries: a package from another one is refused, because npx, uvx and
// docker would fetch the name from their own default, another package than the one listed.
var defaultBase = map[string][]string{
	"npm":  {"", "https://registry.npmjs.org", "https://registry.npmjs.org/"},
	"pypi": {"", "https://pypi.org", "https://pypi.org/", "https://pypi.org/simple", "https://pypi.org/simple/"},
	"oci":  {"", "https://docker.io", "https://registry-1.docker.io", "https://index.docker.io"},
}

// The patterns are compiled at their first use, not at the program's start: every process of
// switchboard links this package, and ociRE alone (its counted repetitions unrolled) was most of
// the 270 KB and 2 ms its init took before `serve` could answer the editor.
var (
	npmNameRE  = lazyRE(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)
	pypiNameRE = lazyRE(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	// An OCI reference: [registry/]path[:tag][@sha256:hex], lower-case path.
	ociRE     = lazyRE(`^[a-z0-9]([a-z0-9._:-]*[a-z0-9])?(/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`)
	envNameRE = lazyRE(`^[A-Za-z_][A-Za-z0-9_]*$`)
	flagRE    = lazyRE(`^--?[A-Za-z0-9][A-Za-z0-9._-]*$`)
	headerRE  = lazyRE("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// lazyRE is a pattern compiled once, at its first use.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Derive turns server s (from the registry at ref.URL, as ref.Name@ref.Version) into the entry
// of server name: the first package Switchboard can run exactly (npm, then PyPI, then OCI, in
// the document's order), else the first remote. Every value from the document that would run or
// be sent is checked; what cannot be said exactly is refused with the reason.
func Derive(s *Server, ref config.RegistryRef, name string) (*Plan, error) {
	var why []string
	for _, p := range s.Packages {
		plan, err := derivePackage(p, name)
		if err == nil {
			plan.Entry.Registry = &ref
			return plan, nil
		}
		why = append(why, err.Error())
	}
	for _, r := range s.Remotes {
		plan, err := deriveRemote(r, name)
		if err == nil {
			plan.Entry.Registry = &ref
			return plan, nil
		}
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		return nil, errors.New("mcpregistry: the server.json lists no packages and no remotes")
	}
	return nil, fmt.Errorf("mcpregistry: nothing in the server.json can be installed: %s", strings.Join(why, "; "))
}

func derivePackage(p Package, name string) (*Plan, error) {
	kind := p.RegistryType
	what := fmt.Sprintf("package %s %s", safetext.Line(kind), safetext.Line(p.Identifier))
	bad := func(format string, a ...any) error { return fmt.Errorf(what+": "+format, a...) }
	if _, ok := defaultBase[kind]; !ok {
		return nil, bad("%s packages are not supported (npm, pypi and oci are)", safetext.Line(kind))
	}
	if !slices.Contains(defaultBase[kind], p.RegistryBaseURL) {
		return nil, bad("it comes from %s, not the default %s registry, and would be fetched from the default one", safetext.Line(p.RegistryBaseURL), kind)
	}
	if t := p.Transport.Type; t != "stdio" && t != "" {
		return nil, bad("transport %s: only stdio packages are run", safetext.Line(t))
	}
	if len(p.RuntimeArguments) > 0 {
		return nil, bad("it has runtimeArguments, flags for npx, uvx or docker themselves: refused")
	}
	plan := &Plan{Kind: kind}
	e := &plan.Entry
	switch kind {
	case "npm":
		if !npmNameRE().MatchString(p.Identifier) || len(p.Identifier) > 214 {
			return nil, bad("not an npm package name")
		}
		if err := CheckVersion(p.Version); err != nil {
			return nil, bad("%v", err)
		}
		e.Command, e.Args = "npx", []string{"-y", p.Identifier + "@" + p.Version}
	case "pypi":
		if !pypiNameRE().MatchString(p.Identifier) || len(p.Identifier) > 200 {
			return nil, bad("not a PyPI package name")
		}
		if err := CheckVersion(p.Version); err != nil {
			return nil, bad("%v", err)
		}
		e.Command, e.Args = "uvx", []string{p.Identifier + "==" + p.Version}
	case "oci":
		if !ociRE().MatchString(p.Identifier) || len(p.Identifier) > 255 {
			return nil, bad("not an OCI image reference")
		}
		ref := p.Identifier
		if at := strings.IndexByte(ref, '@'); at < 0 {
			tag := ""
			if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
				tag = ref[i+1:]
			}
			if tag == "" {
				return nil, bad("the image has no tag or digest")
			}
			if err := CheckVersion(tag); err != nil {
				return nil, bad("%v", err)
			}
		}
		e.Command, e.Args = "docker", []string{"run", "-i", "--rm"}
		for _, v := range p.EnvironmentVariables {
			if envNameRE().MatchString(v.Name) && (v.IsRequired || v.IsSecret || v.Value != "") {
				e.Args = append(e.Args, "-e", v.Name) // the value goes through docker's own environment
			}
		}
		e.Args = append(e.Args, ref)
	}
	args, err := packageArgs(p.PackageArguments)
	if err != nil {
		return nil, bad("%v", err)
	}
	e.Args = append(e.Args, args...)
	env, inputs, optional, err := variables(p.EnvironmentVariables, name, "environment variable", envNameRE())
	if err != nil {
		return nil, bad("%v", err)
	}
	e.Env, plan.Inputs, plan.Optional = env, inputs, optional
	return plan, nil
}

func deriveRemote(r Remote, name string) (*Plan, error) {
	what := fmt.Sprintf("remote %s", safetext.Line(r.URL))
	bad := func(format string, a ...any) error { return fmt.Errorf(what+": "+format, a...) }
	plan := &Plan{Kind: r.Type}
	switch r.Type {
	case "streamable-http":
		plan.Entry.Type = config.TransportHTTP
	case "sse":
		plan.Entry.Type = config.TransportSSE
	default:
		return nil, bad("transport %q is not streamable-http or sse", safetext.Line(r.Type))
	}
	u, err := url.Parse(r.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || strings.ContainsAny(r.URL, "{}") || !safetext.Clean(r.URL) {
		return nil, bad("not a plain https URL (URL variables are not supported)")
	}
	plan.Entry.URL = r.URL
	h, inputs, optional, err := variables(r.Headers, name, "header", headerRE())
	if err != nil {
		return nil, bad("%v", err)
	}
	plan.Entry.Headers, plan.Inputs, plan.Optional = h, inputs, optional
	return plan, nil
}

// packageArgs turns packageArguments into argv: fixed values (value, else default) only. An
// argument the person would have to fill in, a secret one, or one with {variables} is refused:
// the launch must be the registry's exactly, so that Verify can say it is.
func packageArgs(list []Argument) ([]string, error) {
	var out []string
	for _, a := range list {
		v := a.Value
		if v == "" {
			v = a.Default
		}
		label := a.Name
		if label == "" {
			label = a.ValueHint
		}
		switch {
		case a.IsSecret:
			return nil, fmt.Errorf("argument %s is a secret: a secret is never put on a command line", safetext.Line(label))
		case strings.ContainsAny(v, "{}") || len(a.Variables) > 0:
			return nil, fmt.Errorf("argument %s uses variables, which are not supported", safetext.Line(label))
		case !safetext.Clean(v) || strings.ContainsRune(v, 0):
			return nil, fmt.Errorf("argument %s holds control or invisible characters", safetext.Line(label))
		}
		switch a.Type {
		case "positional":
			if v == "" {
				if a.IsRequired {
					return nil, fmt.Errorf("argument %s needs a value the registry does not give; add the server by hand (switchboard mcp add NAME -- COMMAND)", safetext.Line(label))
				}
				continue
			}
			out = append(out, v)
		case "named":
			if !flagRE().MatchString(a.Name) {
				return nil, fmt.Errorf("argument name %q is not a flag (--name)", safetext.Line(a.Name))
			}
			if v == "" && !a.IsRequired {
				continue
			}
			out = append(out, a.Name)
			if v != "" {
				out = append(out, v)
			}
		default:
			return nil, fmt.Errorf("argument type %q is not positional or named", safetext.Line(a.Type))
		}
	}
	return out, nil
}

// variables turns environmentVariables or headers into the entry's values: a secret becomes
// ${input:ID} (asked once, kept in the keychain, never in the file), a value the publisher fixes is
// written, another required one becomes an ${input:ID} question with its default and choices.
// Optional ones are not written (the server has its own default); they are returned to be shown.
func variables(list []KeyValue, server, what string, nameOK *regexp.Regexp) (map[string]string, []config.Input, []KeyValue, error) {
	var vals map[string]string
	var inputs []config.Input
	var optional []KeyValue
	for _, v := range list {
		if !nameOK.MatchString(v.Name) {
			return nil, nil, nil, fmt.Errorf("%s name %q is not valid", what, safetext.Line(v.Name))
		}
		for _, s := range append([]string{v.Value, v.Default}, v.Choices...) {
			if !safetext.Clean(s) || strings.ContainsRune(s, 0) {
				return nil, nil, nil, fmt.Errorf("%s %s holds control or invisible characters", what, v.Name)
			}
		}
		if strings.ContainsAny(v.Value, "{}") || len(v.Variables) > 0 {
			return nil, nil, nil, fmt.Errorf("%s %s uses variables, which are not supported", what, v.Name)
		}
		if vals == nil {
			vals = map[string]string{}
		}
		switch {
		case v.Value != "" && !v.IsSecret:
			vals[v.Name] = v.Value
		case v.IsSecret || v.IsRequired:
			in := config.Input{ID: server + "-" + v.Name, Type: config.InputPromptString, Password: v.IsSecret,
				Description: safetext.Bounded(safetext.Line(v.Description), 200)}
			if in.Description == "" {
				in.Description = v.Name
			}
			if !v.IsSecret {
				in.Default = v.Default
				if len(v.Choices) > 0 {
					in.Type, in.Options = config.InputPickString, v.Choices
				}
			}
			inputs = append(inputs, in)
			vals[v.Name] = "${input:" + in.ID + "}"
		default:
			optional = append(optional, v)
		}
	}
	if len(vals) == 0 {
		vals = nil
	}
	return vals, inputs, optional, nil
}
