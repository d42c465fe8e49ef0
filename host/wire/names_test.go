package wire

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestEditorMirrors checks that the editor integrations spell exactly the commands and
// notifications of names.go (STYLE.md section 5). A mirror that does not exist yet is skipped.
func TestEditorMirrors(t *testing.T) {
	want := append(slices.Clone(Commands), Notifications...)
	slices.Sort(want)
	lit := regexp.MustCompile(`["']((?:switchboard)[./][A-Za-z.]+)["']`)
	for _, file := range []string{
		filepath.Join("..", "..", "editors", "vscode", "src", "lsp_ext.ts"),
		filepath.Join("..", "..", "editors", "nvim", "lua", "switchboard", "protocol.lua"),
	} {
		b, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			t.Logf("%s: not there yet", file)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range lit.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(got, m[1]) {
				got = append(got, m[1])
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s names\n got %v\nwant %v", file, got, want)
		}
	}
}
