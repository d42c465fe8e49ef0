package permissions

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*.txt goldens")

// A golden file testdata/*.txt is a preamble (what it tests) followed by sections
// "-- name --". Sections: input (the allowlist file before; absent = no file), op (one of
// "parse", "replace PREFIX [ENTRY...]", "add ENTRY"), then the generated want-file, want-entries
// and want-error. The file path in errors is written as "allow_tool".
type golden struct {
	preamble string
	names    []string
	sections map[string]string
}

func parseGolden(data string) golden {
	g := golden{sections: map[string]string{}}
	cur := ""
	var b strings.Builder
	flush := func() {
		if cur == "" {
			g.preamble = b.String()
		} else {
			g.names = append(g.names, cur)
			g.sections[cur] = b.String()
		}
		b.Reset()
	}
	for _, l := range strings.SplitAfter(data, "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			cur = strings.TrimSpace(t[3 : len(t)-3])
			continue
		}
		b.WriteString(l)
	}
	flush()
	return g
}

func (g golden) format() string {
	var b strings.Builder
	b.WriteString(g.preamble)
	for _, n := range g.names {
		fmt.Fprintf(&b, "-- %s --\n%s", n, g.sections[n])
	}
	return b.String()
}

func TestGoldens(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no goldens")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			g := parseGolden(string(data))
			path := filepath.Join(t.TempDir(), "allow_tool")
			input, hasInput := g.sections["input"]
			if hasInput {
				writeFile(t, path, input)
			}
			al, _ := OpenAllowlist(path)
			op := strings.Fields(g.sections["op"])
			if len(op) == 0 {
				t.Fatal("no op section")
			}
			switch op[0] {
			case "parse":
				err = al.Err()
				if err == nil && hasInput {
					// Round trip: formatting the parsed lines gives the file back, normalised.
					lines, _ := parseAllowlist(path, []byte(input))
					if err := os.WriteFile(path, formatAllowlist(lines), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			case "replace":
				_, err = al.Replace(op[1], op[2:])
			case "add":
				err = al.Add(op[1])
			default:
				t.Fatalf("unknown op %q", op[0])
			}
			got := map[string]string{
				"want-file":    readFile(t, path),
				"want-entries": strings.Join(append(al.Entries(), ""), "\n"),
				"want-error":   "",
			}
			if got["want-entries"] == "\n" {
				got["want-entries"] = ""
			}
			if err != nil {
				got["want-error"] = strings.ReplaceAll(err.Error(), path, "allow_tool") + "\n"
			}
			if *update {
				var names []string
				for _, n := range g.names {
					if !strings.HasPrefix(n, "want-") {
						names = append(names, n)
					}
				}
				g.names = append(names, "want-file", "want-entries", "want-error")
				for k, v := range got {
					g.sections[k] = v
				}
				if err := os.WriteFile(file, []byte(g.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, k := range []string{"want-file", "want-entries", "want-error"} {
				if diff := cmp.Diff(g.sections[k], got[k]); diff != "" {
					t.Errorf("%s (-want +got):\n%s", k, diff)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
		msg  string
	}{
		{"ok\nbad entry\n", 2, "invalid character ' '"},
		{"# c\n\n*\n", 3, `bare "*"`},
		{"mcp__a*b\n", 1, `only allowed at the end`},
		{"mcp__a__**\n", 1, `only allowed at the end`},
		{"x.y\n", 1, `invalid character '.'`},
		{"a\r\nb\r\nc d\r\n", 3, "invalid character"},
	} {
		_, err := parseAllowlist("F", []byte(tc.in))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != tc.line || pe.File != "F" || !strings.Contains(pe.Msg, tc.msg) {
			t.Errorf("parse(%q) = %v; want line %d containing %q", tc.in, err, tc.line, tc.msg)
			continue
		}
		if want := fmt.Sprintf("F:%d: ", tc.line); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error %q does not start with %q", err, want)
		}
	}
}

func TestValidPrefix(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"mcp__github__", true},
		{"mcp__sqlite-notes__", true},
		{"mcp__a_b__", true},
		{"mcp__9__", true},
		{"mcp__github", false},
		{"github__", false},
		{"mcp____", false},
		{"mcp__a__b__", false},
		{"mcp___x__", false},
		{"mcp__-x__", false},
		{"mcp__x y__", false},
		{"mcp__github__*", false},
	} {
		err := ValidPrefix(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ValidPrefix(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
		var ie *InputError
		if err != nil && !errors.As(err, &ie) {
			t.Errorf("ValidPrefix(%q) error %T is not *InputError", tc.in, err)
		}
	}
}

func TestMatch(t *testing.T) {
	a, _ := OpenAllowlist("")
	for _, e := range []string{"write_file", "mcp__gh__*", "mcp__gh__create_issue", "mcp__db__read*", "mcp__db__*"} {
		if err := a.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	// "mcp__gh__*" collapsed the exact gh entry; prefix entries of other servers stay.
	if diff := cmp.Diff([]string{"write_file", "mcp__gh__*", "mcp__db__*"}, a.Entries()); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	a, _ = OpenAllowlist("")
	a.Add("write_file")
	a.Add("mcp__db__read*")
	a.Add("mcp__db__re*")
	a.Add("mcp__gh__list_issues")
	for _, tc := range []struct{ tool, entry string }{
		{"write_file", "write_file"},
		{"write_file2", ""},
		{"mcp__db__read_query", "mcp__db__read*"}, // longest prefix wins
		{"mcp__db__reset", "mcp__db__re*"},
		{"mcp__db__write", ""},
		{"mcp__gh__list_issues", "mcp__gh__list_issues"},
		{"mcp__gh__list_issues_x", ""},
		{"", ""},
	} {
		e, ok := a.Match(tc.tool)
		if e != tc.entry || ok != (tc.entry != "") {
			t.Errorf("Match(%q) = %q, %v; want %q", tc.tool, e, ok, tc.entry)
		}
	}
}

func TestReplaceInputErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "allow_tool")
	const content = "# keep\nmcp__gh__a\n"
	writeFile(t, path, content)
	a, _ := OpenAllowlist(path)
	for _, tc := range []struct {
		prefix  string
		entries []string
	}{
		{"mcp__gh", nil},
		{"mcp__gh__", []string{"mcp__other__x"}},
		{"mcp__gh__", []string{"mcp__gh__ok", "mcp__gh__bad entry"}},
		{"mcp__gh__", []string{"*"}},
		{"mcp__gh__", []string{""}},
	} {
		_, err := a.Replace(tc.prefix, tc.entries)
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("Replace(%q, %q) = %v, want *InputError", tc.prefix, tc.entries, err)
		}
	}
	if err := a.Add("bad entry"); !errors.As(err, new(*InputError)) {
		t.Errorf("Add(bad) = %v, want *InputError", err)
	}
	if got := readFile(t, path); got != content {
		t.Errorf("file changed by invalid input:\n%s", got)
	}
}

func TestMalformedNeverOverwritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "allow_tool")
	const content = "mcp__gh__*\n# next line is broken\nmcp__x__a b\n"
	writeFile(t, path, content)
	a, err := OpenAllowlist(path)
	if err != nil {
		t.Fatalf("OpenAllowlist: %v", err)
	}
	var pe *ParseError
	if !errors.As(a.Err(), &pe) || pe.Line != 3 || pe.File != path {
		t.Fatalf("Err() = %v, want a ParseError at %s:3", a.Err(), path)
	}
	if _, ok := a.Match("mcp__gh__x"); ok {
		t.Error("a malformed file granted a tool")
	}
	if a.Entries() != nil {
		t.Errorf("Entries() = %q, want nil", a.Entries())
	}
	_, err = a.Replace("mcp__gh__", nil)
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), path+":3:") {
		t.Errorf("Replace on malformed file: %v", err)
	}
	if err := a.Add("write_file"); err == nil || !strings.Contains(err.Error(), path+":3:") {
		t.Errorf("Add on malformed file: %v", err)
	}
	if got := readFile(t, path); got != content {
		t.Errorf("malformed file overwritten:\n%s", got)
	}
	// Fixed by hand: Reload picks it up.
	writeFile(t, path, "mcp__gh__*\n")
	if err := a.Reload(); err != nil || a.Err() != nil {
		t.Fatalf("Reload after fix: %v", err)
	}
	if _, ok := a.Match("mcp__gh__x"); !ok {
		t.Error("fixed file does not match")
	}
}

func TestWritePreservesMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "allow_tool")
	a, _ := OpenAllowlist(path)
	if err := a.Add("write_file"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Replace("mcp__gh__", []string{"mcp__gh__*"}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after write %v, want 0640", fi.Mode().Perm())
	}
	if _, err := os.Stat(path + ".lock"); err != nil {
		t.Errorf("no separate lock file: %v", err)
	}
}

func TestStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "allow_tool")
	for _, n := range []string{".allow_tool8675309", ".allow_tool.swp", ".allow_toolx1", "allow_tool1"} {
		writeFile(t, filepath.Join(dir, n), "x")
	}
	a, _ := OpenAllowlist(path)
	if err := a.Add("write_file"); err != nil {
		t.Fatal(err)
	}
	var names []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{".allow_tool.swp", ".allow_toolx1", "allow_tool", "allow_tool.lock", "allow_tool1"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("folder after a write (-want +got):\n%s", diff)
	}
}

func FuzzAllowlist(f *testing.F) {
	f.Add([]byte("# comment\n\nmcp__github__*\nwrite_file\n"))
	f.Add([]byte("  a  \r\n\t# x \n"))
	f.Add([]byte("a*\n*\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := parseAllowlist("F", data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v is not a ParseError with a line", err)
			}
			return
		}
		out := formatAllowlist(lines)
		again, err := parseAllowlist("F", out)
		if err != nil {
			t.Fatalf("parse(format(x)) failed: %v\nformatted: %q", err, out)
		}
		if diff := cmp.Diff(lines, again, cmp.AllowUnexported(line{})); diff != "" {
			t.Fatalf("parse(format(x)) != x (-x +again):\n%s", diff)
		}
		if string(formatAllowlist(again)) != string(out) {
			t.Fatalf("format not stable")
		}
		// The match structures agree with a plain scan.
		s := newState(lines, nil)
		for _, l := range lines {
			if l.Entry == "" {
				continue
			}
			tool := strings.TrimSuffix(l.Entry, "*") + "x"
			a := &Allowlist{}
			a.st.Store(s)
			if _, ok := a.Match(tool); !ok && strings.HasSuffix(l.Entry, "*") {
				t.Fatalf("Match(%q) failed with entry %q", tool, l.Entry)
			}
		}
	})
}

// A reload that read the file before this process wrote it must not store what it read: the
// user's revoke would be undone (the grant allowed again) until the next file event. Seen in the
// Neovim suite as ":Switchboard allow" showing a revoked server grant still ticked.
func TestReloadDoesNotUndoAWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "allowlist")
	if err := os.WriteFile(path, []byte("mcp__demo__*\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, _ := OpenAllowlist(path)
	once := true
	testHookReloadRead = func() {
		if once { // the watcher read the file; now the user revokes, before it stores
			once = false
			if _, err := a.Replace("mcp__demo__", nil); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { testHookReloadRead = nil })
	if err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := a.Entries(); len(got) != 0 {
		t.Errorf("after a revoke during a reload, Entries() = %q, want none", got)
	}
	if _, ok := a.Match("mcp__demo__echo"); ok {
		t.Error("the revoked server grant still matches")
	}
}
