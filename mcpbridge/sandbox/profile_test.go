package sandbox

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    *Profile
		wantErr string
	}{
		{in: `false`, want: nil},
		{in: `null`, want: nil},
		{in: `true`, want: &Profile{}},
		{in: `{}`, want: &Profile{}},
		{in: `{"network": false}`, want: &Profile{}},
		{in: `{"network": []}`, want: &Profile{}},
		{in: `{"network": true}`, want: &Profile{Network: Network{Mode: NetAll}}},
		{in: `{"read": ["~/data"], "write": ["./build"], "network": ["api.github.com", "*.example.com", "localhost:8080"]}`,
			want: &Profile{Read: []string{"~/data"}, Write: []string{"./build"}, Network: Network{Mode: NetDomains, Domains: []string{"api.github.com", "*.example.com", "localhost:8080"}}}},
		{in: `"yes"`, wantErr: "must be true, false or an object"},
		{in: `{"wirte": ["./build"]}`, wantErr: `unknown key "wirte"`},
		{in: `{"read": "./x"}`, wantErr: "read must be a list of paths"},
		{in: `{"read": [""]}`, wantErr: "read[0]"},
		{in: `{"write": ["./a\u202eb"]}`, wantErr: "control or invisible"},
		{in: `{"read": ["~bob/x"]}`, wantErr: "~user"},
		{in: `{"network": "all"}`, wantErr: "network must be false, true or a list"},
		{in: `{"network": ["*"]}`, wantErr: "network[0]"},
		{in: `{"network": ["*.com"]}`, wantErr: "registrable"},
		{in: `{"network": ["a.*.com"]}`, wantErr: "leading"},
		{in: `{"network": ["API.github.com"]}`, wantErr: "lower case"},
		{in: `{"network": ["api.github.com:99999"]}`, wantErr: "port"},
		{in: `{"network": ["evil.com/path"]}`, wantErr: "not allowed"},
	} {
		got, err := Parse([]byte(tc.in))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse(%s) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%s): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Parse(%s) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestCanonical: the same grant spelt differently fingerprints alike; any loosening differs.
func TestCanonical(t *testing.T) {
	c := func(s string) string {
		p, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return p.Canonical()
	}
	if a, b := c(`true`), c(`{"network": false, "read": []}`); a != b {
		t.Errorf("true and its spelt-out form differ: %s vs %s", a, b)
	}
	if a, b := c(`{"write": ["./b", "./a", "./a"]}`), c(`{"write": ["./a", "./b"]}`); a != b {
		t.Errorf("order or duplicates changed the fingerprint: %s vs %s", a, b)
	}
	base := c(`{"write": ["./build"], "network": ["api.github.com"]}`)
	for _, looser := range []string{
		`{"write": ["./build", "./src"], "network": ["api.github.com"]}`,
		`{"write": ["./build"], "read": ["~/data"], "network": ["api.github.com"]}`,
		`{"write": ["./build"], "network": ["api.github.com", "*.example.com"]}`,
		`{"write": ["./build"], "network": true}`,
		`{"read": ["./build"], "network": ["api.github.com"]}`, // a write moved to read also differs
	} {
		if c(looser) == base {
			t.Errorf("%s fingerprints as %s", looser, base)
		}
	}
	if got, want := base, `{"read":[],"write":["./build"],"network":["api.github.com"]}`; got != want {
		t.Errorf("Canonical = %s, want %s", got, want)
	}
	for _, in := range []string{`true`, `{"network": true, "read": ["/b", "/a"]}`, `{"write": ["./build"], "network": ["api.github.com"]}`} {
		p, err := Parse([]byte(c(in)))
		if err != nil || p.Canonical() != c(in) {
			t.Errorf("the canonical form of %s does not read back: %v", in, err)
		}
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`true`, "sandboxed: no network, writes only its own folder"},
		{`{"write": ["./build"]}`, "sandboxed: no network, writes only ./build and its own folder"},
		{`{"network": true, "read": ["~/data", "/srv/a"]}`, "sandboxed: full network, writes only its own folder, also reads /srv/a and ~/data"},
		{`{"network": ["api.github.com", "*.example.com"], "write": ["./a", "./b", "./c"]}`,
			"sandboxed: network only *.example.com and api.github.com, writes only ./a, ./b and ./c and its own folder"},
		{`{"write": [".", "./.git/hooks", "/home/u/p/.vscode/tasks.json"]}`,
			"sandboxed: no network, writes only . and its own folder, also writes ./.git/hooks and /home/u/p/.vscode/tasks.json, which git, an editor or a shell runs code from outside the sandbox"},
		{`{"write": [".envrc"]}`,
			"sandboxed: no network, writes only its own folder, also writes .envrc, which git, an editor or a shell runs code from outside the sandbox"},
		{`{"write": ["./git/hooks", "./vscode"]}`, "sandboxed: no network, writes only ./git/hooks and ./vscode and its own folder"},
	} {
		p, err := Parse([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Describe(); got != tc.want {
			t.Errorf("Describe(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
