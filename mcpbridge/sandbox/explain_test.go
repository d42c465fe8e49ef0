package sandbox

import (
	"path/filepath"
	"testing"
)

func TestExplain(t *testing.T) {
	plan := &Plan{
		Home:    "/home/u",
		Read:    []string{"/usr", "/home/u/project"},
		Write:   []string{"/home/u/.local/state/switchboard/sandboxes/fs", "/home/u/project/build"},
		Denied:  []string{"/home/u/.ssh", "/home/u/.local/state/switchboard"},
		Network: Network{Mode: NetNone},
		Fixed:   []string{"/home/u/project/.git", "/home/u/project/.git/hooks", "/home/u/project/.envrc"},
	}
	const fixed = " (git, an editor or a shell runs code from it outside the sandbox; list it under the entry's write to allow it)"
	for _, tc := range []struct{ line, want string }{
		{`Error: EACCES: permission denied, open '/home/u/.ssh/id_rsa'`, "blocked: read of ~/.ssh/id_rsa (never open to a sandboxed server)"},
		{`PermissionError: [Errno 13] Permission denied: '/etc/shadow2'`, "blocked: read of /etc/shadow2 (outside the server's sandbox)"},
		{`open /home/u/notes.txt: permission denied`, "blocked: read of ~/notes.txt (outside the server's sandbox)"},
		{`Error: EACCES: permission denied, mkdir '/home/u/project/out'`, "blocked: write to ~/project/out (the sandbox lets it read there, not write)"},
		{`cat: /home/u/.local/state/switchboard/oauth-tokens.json: Permission denied`, "blocked: read of ~/.local/state/switchboard/oauth-tokens.json (never open to a sandboxed server)"},
		{`dial tcp 140.82.112.3:443: connect: permission denied`, "blocked: connection to 140.82.112.3:443 (the sandbox has no network)"},
		{`Error: EACCES: permission denied, open '/home/u/.ssh/\x1b[2Jx'`, `blocked: read of ~/.ssh/\x1b[2Jx (never open to a sandboxed server)`},
		{`Error: EACCES: permission denied, open '/home/u/project/build/x'`, ""}, // allowed: not the sandbox
		{`Error: EROFS: read-only file system, open '/home/u/project/.git/hooks/pre-commit'`, "blocked: write to ~/project/.git/hooks/pre-commit" + fixed},
		{`OSError: [Errno 30] Read-only file system: '/home/u/project/.envrc'`, "blocked: write to ~/project/.envrc" + fixed},
		{`rename /home/u/project/.git /home/u/project/g: device or resource busy`, "blocked: write to ~/project/.git" + fixed},
		{`mv: cannot move '/home/u/project/.git' to '/home/u/g': Device or resource busy`, "blocked: write to ~/project/.git" + fixed},
		{`open /mnt/cdrom/x: read-only file system`, ""}, // a read-only disk, not the sandbox
		{`server listening`, ""},
		{`Error: ENOENT: no such file or directory, open '/home/u/.ssh/id_rsa'`, ""}, // not there for the host either
		{`EACCES: permission denied, open 'relative'`, ""},
	} {
		got, ok := plan.Explain(tc.line)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Explain(%q) = %q, %v; want %q", tc.line, got, ok, tc.want)
		}
	}
}

// TestExplainEscaper: the escaper's real refusals, confined, each explain as blocked.
func TestExplainEscaper(t *testing.T) {
	requireLandlock(t)
	w := newWorld(t)
	id := filepath.Join(w.home, ".ssh/id_rsa")
	got := runConfined(t, w, Profile{}, Options{}, "read:"+id, "write:"+filepath.Join(w.project, "x"))
	plan, err := Resolve(Profile{}, w.env(escaperPath(t)))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := plan.Explain(got["read:"+id].Err); !ok || s != "blocked: read of ~/.ssh/id_rsa (never open to a sandboxed server)" {
		t.Errorf("Explain(%q) = %q", got["read:"+id].Err, s)
	}
	if s, ok := plan.Explain(got["write:"+filepath.Join(w.project, "x")].Err); !ok {
		t.Errorf("write into the read-only workspace not explained: %q", s)
	}
}
