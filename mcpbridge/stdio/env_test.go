package stdio

import (
	"strings"
	"testing"
)

// TestChildEnvFoldsCaseOnWindows: on Windows a server's PATH replaces the inherited Path.
func TestChildEnvFoldsCaseOnWindows(t *testing.T) {
	old := foldEnvCase
	t.Cleanup(func() { foldEnvCase = old })
	foldEnvCase = true
	got := ChildEnv([]string{"Path=C:\\Windows", "TEMP=x"}, map[string]string{"PATH": "C:\\repo\\bin"})
	if strings.Join(got, ";") != "PATH=C:\\repo\\bin;TEMP=x" {
		t.Errorf("ChildEnv = %q", got)
	}
}
