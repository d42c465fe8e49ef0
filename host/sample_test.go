package host

import (
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/permissions"
)

// TestSampleConsentPerDefinition: "Allow this server" is remembered for a definition
// (fingerprint); it holds only while the server of that name is configured with that very
// definition and, for a workspace file's server, while that definition is trusted.
func TestSampleConsentPerDefinition(t *testing.T) {
	trust, err := permissions.OpenTrustStore(filepath.Join(t.TempDir(), "trust.json"))
	if err != nil {
		t.Fatal(err)
	}
	a := &App{trust: trust, sampleOK: map[string]bool{}}
	user := config.ServerConfig{Name: "s", Transport: config.TransportStdio, Command: "mcptest", Args: []string{"--sample"}}
	edited := user
	edited.Args = []string{"--sample", "--tools", "1"}
	ws := config.ServerConfig{Name: "w", Transport: config.TransportStdio, Command: "mcptest", Args: []string{"--sample"}, WorkspaceOnly: true, Folder: "/repoA"}
	other := ws
	other.Folder = "/repoB" // written the same, in another folder
	for _, c := range []config.ServerConfig{user, ws} {
		a.sampleOK[c.Fingerprint()] = true // the person allowed these two
	}
	if err := trust.Set("w", ws.Fingerprint(), true); err != nil {
		t.Fatal(err)
	}
	if err := trust.Set("w", other.Fingerprint(), true); err != nil {
		t.Fatal(err)
	}
	check := func(desc, server string, want bool, wantFP string) {
		t.Helper()
		fp, ok := a.sampleAllowed(server)
		if ok != want || fp != wantFP {
			t.Errorf("%s: sampleAllowed(%q) = %.8s, %v; want %.8s, %v", desc, server, fp, ok, wantFP, want)
		}
	}
	a.cfgs.set([]config.ServerConfig{user, ws}, "", nil)
	check("the allowed user server", "s", true, user.Fingerprint())
	check("the allowed workspace server", "w", true, ws.Fingerprint())
	check("a server never configured", "x", false, "")

	a.cfgs.set([]config.ServerConfig{edited, other}, "", nil)
	check("the user server edited", "s", false, edited.Fingerprint())
	check("another folder's server of the same name", "w", false, other.Fingerprint())

	a.cfgs.set(nil, "", nil)
	check("the user server no longer configured", "s", false, "")
	check("the workspace server no longer configured", "w", false, "")

	a.cfgs.set([]config.ServerConfig{user, ws}, "", nil)
	check("the user server as allowed again", "s", true, user.Fingerprint())
	if err := trust.Set("w", ws.Fingerprint(), false); err != nil {
		t.Fatal(err)
	}
	check("the workspace server no longer trusted", "w", false, ws.Fingerprint())
}
