package mcpregistry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// VerifyMaxAge is how long a document read for Verify is used before it is read again (a
// version's server.json does not change, but its status may become "deleted").
const VerifyMaxAge = 24 * time.Hour

// Verify says whether the resolved config c is exactly what the registry of client gives for the
// server and version its "registry" names: the entry must name this registry, the version must
// be there and not deleted, and the launch derived from its server.json again must be c's: the
// same command and arguments (byte for byte), or the same URL; no environment variable or header
// the server.json does not declare (NODE_OPTIONS added by hand would change what runs); a value
// the publisher fixed unchanged; no cwd or envFile. nil when it is.
func Verify(ctx context.Context, client *Client, c config.ServerConfig) error {
	ref := c.Registry
	if ref == nil {
		return fmt.Errorf("%s was not installed from a registry (switchboard mcp add --from-registry)", c.Name)
	}
	if u, err := NormalizeURL(ref.URL); err != nil || u != client.URL() {
		return fmt.Errorf("%s was installed from %s, not from the organisation's registry %s", c.Name, ref.URL, client.URL())
	}
	r, err := client.Lookup(ctx, ref.Name, ref.Version, VerifyMaxAge)
	if errors.Is(err, ErrUnreachable) {
		return fmt.Errorf("%s@%s cannot be checked: the registry %s could not be reached (%s)", ref.Name, ref.Version, client.URL(), cause(err))
	}
	if err != nil {
		return fmt.Errorf("%s@%s cannot be checked against the registry %s: %v", ref.Name, ref.Version, client.URL(), err)
	}
	if r.Status() == "deleted" {
		return fmt.Errorf("%s@%s was deleted from the registry %s", ref.Name, ref.Version, client.URL())
	}
	plan, err := Derive(&r.Server, *ref, c.Name)
	if err != nil {
		return fmt.Errorf("%s@%s: %v", ref.Name, ref.Version, err)
	}
	e := plan.Entry
	// An optional variable the server.json declares is the person's to set, as an answered input.
	for _, v := range plan.Optional {
		m := &e.Env
		if e.Type != "" {
			m = &e.Headers
		}
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[v.Name] = "${input:}"
	}
	differs := func(what string) error {
		return fmt.Errorf("%s differs from %s@%s in the registry (%s)", c.Name, ref.Name, ref.Version, what)
	}
	transport := e.Type
	if transport == "" {
		transport = config.TransportStdio
	}
	switch {
	case c.Transport != transport:
		return differs("transport " + c.Transport)
	case c.Command != e.Command || !slices.Equal(c.Args, e.Args):
		return differs("command line")
	case c.URL != e.URL:
		return differs("URL")
	case c.Cwd != "":
		return differs("cwd is set")
	case c.EnvFile != "":
		return differs("envFile is set")
	}
	if err := sameVars(c.Env, e.Env, "environment variable"); err != nil {
		return differs(err.Error())
	}
	if err := sameVars(c.Headers, e.Headers, "header"); err != nil {
		return differs(err.Error())
	}
	return nil
}

// sameVars: every key of have is one the registry's entry has, and a value the publisher fixed
// (not an ${input:...} the person answers) is unchanged.
func sameVars(have, want map[string]string, what string) error {
	for k, v := range have {
		w, ok := want[k]
		if !ok && what == "header" {
			for wk := range want {
				if strings.EqualFold(wk, k) {
					w, ok = want[wk], true
				}
			}
		}
		switch {
		case !ok:
			return fmt.Errorf("%s %s is not in its server.json", what, k)
		case !strings.HasPrefix(w, "${input:") && v != w:
			return fmt.Errorf("%s %s is not the publisher's value", what, k)
		}
	}
	return nil
}
