//go:build !windows

package tokenstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsnotify/fsnotify"
)

// TestSaveStaysInItsFolder: saving the tokens file writes its temporary file in the file's own
// folder and renames it there, and removes no name there (the kernel keeps each removed name in
// its cache of the folder, and each host's watch of a folder walks them all). It never uses
// $TMPDIR: renameio's default wrote the tokens to a temporary file there (seen failing), where a
// writer that crashed would have left them in a shared folder.
func TestSaveStaysInItsFolder(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir() // the same file system as dir: where renameio's default would go
	t.Setenv("TMPDIR", tmp)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	tw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	if err := tw.Add(tmp); err != nil {
		t.Fatal(err)
	}
	f := NewFile(filepath.Join(dir, "tokens.json"))
	for range 2 { // new, then replaced
		if err := f.Save(context.Background(), "s", cred); err != nil {
			t.Fatal(err)
		}
	}
	// A sentinel, written last, ends what there is to see in each folder.
	for _, d := range []string{dir, tmp} {
		if err := os.WriteFile(filepath.Join(d, "sentinel"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []struct {
		w    *fsnotify.Watcher
		what string
	}{{w, "the tokens' folder"}, {tw, "$TMPDIR"}} {
		for ev := range x.w.Events {
			name := filepath.Base(ev.Name)
			if name == "sentinel" {
				break
			}
			if ev.Has(fsnotify.Remove) {
				t.Errorf("%s: %s was removed: a save created and removed a name", x.what, name)
			}
			if x.what == "$TMPDIR" {
				t.Errorf("$TMPDIR: %s (%s): a save used it", name, ev.Op)
			}
			if ev.Has(fsnotify.Create) && name != "tokens.json" && name != "tokens.json.lock" && !strings.HasPrefix(name, ".tokens.json") {
				t.Errorf("%s: %s was created", x.what, name)
			}
		}
	}
}
