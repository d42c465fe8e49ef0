//go:build windows

package policy

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultPathsIgnoreUserEnvironment (attack): the user sets ProgramFiles in their own
// environment (the editor starts Switchboard with it) to a folder that holds no policy; the
// policy must still be read from the real Program Files.
func TestDefaultPathsIgnoreUserEnvironment(t *testing.T) {
	fake := t.TempDir()
	t.Setenv("ProgramFiles", fake)
	ps := DefaultPaths()
	for _, d := range []string{ps.Dir, ps.ClaudeCodeDir} {
		if strings.HasPrefix(strings.ToLower(d), strings.ToLower(fake)) || !filepath.IsAbs(d) {
			t.Errorf("policy folder %s follows the user's ProgramFiles %s", d, fake)
		}
	}
}
