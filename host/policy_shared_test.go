package host

import (
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// TestPolicySharedServers: the policy's sharedServers narrows what the user marked shared:
// "deny" runs every server in its window, "workspace-only" shares a server marked true only
// among windows of the same folders; "allow" and no policy change nothing. The caller's slice is
// never changed.
func TestPolicySharedServers(t *testing.T) {
	in := []config.ServerConfig{
		{Name: "all", Transport: config.TransportStdio, Command: "a", Shared: config.SharedUser},
		{Name: "folder", Transport: config.TransportStdio, Command: "f", Shared: config.SharedWorkspace},
		{Name: "own", Transport: config.TransportStdio, Command: "o"},
	}
	for _, tc := range []struct {
		settings string
		want     map[string]string
	}{
		{`{}`, map[string]string{"all": config.SharedUser, "folder": config.SharedWorkspace, "own": ""}},
		{`{"sharedServers": "allow"}`, map[string]string{"all": config.SharedUser, "folder": config.SharedWorkspace, "own": ""}},
		{`{"sharedServers": "workspace-only"}`, map[string]string{"all": config.SharedWorkspace, "folder": config.SharedWorkspace, "own": ""}},
		{`{"sharedServers": "deny"}`, map[string]string{"all": "", "folder": "", "own": ""}},
	} {
		out, errs := WithManaged(rootPolicy(t, tc.settings), in, nil)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", tc.settings, errs)
		}
		for _, c := range out {
			if c.Shared != tc.want[c.Name] {
				t.Errorf("%s: %s shared %q, want %q", tc.settings, c.Name, c.Shared, tc.want[c.Name])
			}
		}
	}
	if in[0].Shared != config.SharedUser || in[1].Shared != config.SharedWorkspace {
		t.Errorf("the caller's configs were changed: %+v", in)
	}
}
