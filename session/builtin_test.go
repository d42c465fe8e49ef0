package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBuiltinTools(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writeFiles(t, root, map[string]string{
		"a.go":        "package a\n\nfunc A() {}\n",
		"sub/b.go":    "package sub\n// TODO: b\n",
		"sub/c.txt":   "TODO: c\n",
		".git/config": "TODO: never searched",
		"bin.dat":     "TODO\x00binary",
	})
	writeFiles(t, outside, map[string]string{"secret.txt": "secret"})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Skip("no symlinks:", err)
	}
	os.Symlink(outside, filepath.Join(root, "linkdir"))
	ws := &sessiontest.Workspace{Dirs: []string{root}}
	ws.Open(filepath.Join(root, "a.go"), "package a // unsaved\n")
	m := newManager(t, session.Options{Workspace: ws}, "")

	call := func(name, args string) (string, bool) {
		t.Helper()
		res, d := m.CallTool(context.Background(), name, json.RawMessage(args), permissions.AlwaysAllow)
		if !d.Allowed {
			t.Fatalf("%s denied: %+v", name, d)
		}
		return res.Text, res.IsError
	}
	for _, tc := range []struct {
		name, args string
		want       string // substring
		isErr      bool
	}{
		{"read_file", `{"path":"a.go"}`, "package a // unsaved\n", false},
		{"read_file", `{"path":"sub/b.go","offset":2,"limit":1}`, "// TODO: b\n", false},
		{"read_file", `{"path":"` + filepath.Join(root, "sub/c.txt") + `"}`, "TODO: c", false},
		{"read_file", `{"path":"../x"}`, "outside the workspace", true},
		{"read_file", `{"path":"` + filepath.Join(outside, "secret.txt") + `"}`, "outside the workspace", true},
		{"read_file", `{"path":"link.txt"}`, "symlink", true},
		{"read_file", `{"path":"linkdir/secret.txt"}`, "symlink", true},
		{"read_file", `{"path":"missing.txt"}`, "no such file", true},
		{"read_file", `{}`, "path is required", true},
		{"list_files", `{}`, "a.go\nbin.dat\nlink.txt\nlinkdir\nsub/\n", false},
		{"list_files", `{"path":"sub","recursive":true}`, "b.go\nc.txt\n", false},
		{"list_files", `{"path":"linkdir"}`, "symlink", true},
		{"search_files", `{"pattern":"TODO"}`, "sub/b.go:2: // TODO: b\nsub/c.txt:1: TODO: c\n", false},
		{"search_files", `{"pattern":"TODO","glob":"*.go"}`, "sub/b.go:2: // TODO: b\n", false},
		{"search_files", `{"pattern":"unsaved"}`, "a.go:1: package a // unsaved", false},
		{"search_files", `{"pattern":"("}`, "bad pattern", true},
		{"search_files", `{"pattern":"zzz"}`, "no matches", false},
	} {
		got, isErr := call(tc.name, tc.args)
		if isErr != tc.isErr || !strings.Contains(got, tc.want) {
			t.Errorf("%s %s = %q (isError %v); want %q (isError %v)", tc.name, tc.args, got, isErr, tc.want, tc.isErr)
		}
		if strings.Contains(got, "secret") && !strings.Contains(tc.args, "secret") {
			t.Errorf("%s %s leaked the outside file: %q", tc.name, tc.args, got)
		}
	}
}

func TestEditFile(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.go": "one two two\n"})
	ws := &sessiontest.Workspace{Dirs: []string{root}}
	gate := sessiontest.AllowAll()
	m := newManager(t, session.Options{Workspace: ws, Gate: gate}, "")
	edit := func(args string) (string, bool) {
		res, _ := m.CallTool(context.Background(), "edit_file", json.RawMessage(args), permissions.SingleConfirm)
		return res.Text, res.IsError
	}
	if got, isErr := edit(`{"path":"a.go","old_string":"two","new_string":"2"}`); !isErr || !strings.Contains(got, "occurs 2 times") {
		t.Errorf("ambiguous edit: %q", got)
	}
	if got, isErr := edit(`{"path":"a.go","old_string":"two","new_string":"2","replace_all":true}`); isErr {
		t.Errorf("replace_all: %q", got)
	}
	if got, isErr := edit(`{"path":"a.go","old_string":"zzz","new_string":"2"}`); !isErr || !strings.Contains(got, "not found") {
		t.Errorf("missing old_string: %q", got)
	}
	if got, isErr := edit(`{"path":"new/file.txt","content":"hi"}`); isErr {
		t.Errorf("new file: %q", got)
	}
	if got, isErr := edit(`{"path":"../evil","content":"x"}`); !isErr {
		t.Errorf("edit outside: %q", got)
	}
	edits := ws.Edits()
	want := []sessiontest.Edit{{Path: filepath.Join(root, "a.go"), Text: "one 2 2\n"}, {Path: filepath.Join(root, "new/file.txt"), Text: "hi"}}
	if len(edits) != 2 || edits[0] != want[0] || edits[1] != want[1] {
		t.Errorf("edits = %+v", edits)
	}
	for _, r := range gate.Requests() {
		if r.ReadOnlyBuiltin || r.Tool != "edit_file" {
			t.Errorf("gate request %+v: edit_file must ask", r)
		}
	}
}

func TestBuiltinsWithoutWorkspace(t *testing.T) {
	m := newManager(t, session.Options{}, "")
	res, _ := m.CallTool(context.Background(), "list_files", nil, permissions.AlwaysAllow)
	if !res.IsError || !strings.Contains(res.Text, "no workspace") {
		t.Errorf("%+v", res)
	}
}
