package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestEscapesFail runs the escaper under the default profile (plus a listed write folder) and
// checks each escape fails, each allowed action works, and a setsid grandchild of a double fork
// is held exactly as its grandparent.
func TestEscapesFail(t *testing.T) {
	requireLandlock(t)
	testEscapes(t, true)
}

// TestEscapesWorkUnconfined is the control: the same escapes, unconfined, all succeed, so
// TestEscapesFail's refusals are the sandbox's doing and not the test's.
func TestEscapesWorkUnconfined(t *testing.T) {
	testEscapes(t, false)
}

func testEscapes(t *testing.T, confined bool) {
	w := newWorld(t)
	ln := listenDropping(t, "tcp", "127.0.0.1:0") // a port on the host, outside the sandbox
	escapes := []string{
		"read:" + filepath.Join(w.home, ".ssh/id_rsa"),
		"read:" + filepath.Join(w.home, ".aws/credentials"),
		"read:" + w.token,
		"read:" + filepath.Join(w.other, "state.json"),
		"read:" + filepath.Join(w.home, "notes.txt"),
		"list:" + w.home,
		"write:" + filepath.Join(w.home, "planted"),
		"write:" + filepath.Join(w.project, "planted"),
		"write:" + filepath.Join(w.other, "state.json"),
		"write:" + filepath.Join(os.TempDir(), "sandbox-escaper-planted"),
		"connect:" + ln.Addr().String(),
		"exec:" + filepath.Join(w.home, ".ssh/id_rsa"),
		"signal:" + strconv.Itoa(os.Getpid()),
	}
	allowed := []string{
		"read:" + filepath.Join(w.project, "README"),
		"read:/etc/hostname",
		"write:" + filepath.Join(w.state, "tmp", "scratch"),
		"write:" + filepath.Join(w.build, "out.txt"),
		"exec:" + filepath.Join(w.project, "README"),
	}
	var actions []string
	actions = append(actions, escapes...)
	actions = append(actions, allowed...)
	actions = append(actions, "fork")
	actions = append(actions, escapes...)
	actions = append(actions, allowed...)
	if !confined {
		got := runUnconfined(t, w, actions...)
		for _, a := range escapes {
			if r := got[a]; !r.OK {
				t.Errorf("unconfined %s failed: %+v", a, r)
			}
		}
		return
	}
	got := runConfined(t, w, Profile{Write: []string{"./build"}}, Options{}, actions...)
	for _, prefix := range []string{"", "grandchild "} {
		for _, a := range escapes {
			r, ok := got[prefix+a]
			if !ok {
				t.Errorf("%s%s: no result", prefix, a)
			} else if testing.Verbose() {
				t.Logf("%s%s: %s", prefix, a, r.Err)
			}
			if r.OK {
				t.Errorf("%s%s: escaped (body %q)", prefix, a, r.Body)
			}
		}
		for _, a := range allowed {
			r, ok := got[prefix+a]
			if !ok || !r.OK {
				t.Errorf("%s%s: refused: %+v", prefix, a, r)
			}
		}
	}
	if _, ok := got["grandchild setsid"]; ok {
		t.Errorf("the grandchild did not lead its own session")
	}
	for _, planted := range []string{filepath.Join(w.home, "planted"), filepath.Join(w.project, "planted")} {
		if _, err := os.Stat(planted); err == nil {
			t.Errorf("%s was written", planted)
		}
	}
}

// homeCredentials are credential files a home folder holds (database, cloud storage, registry and
// AI sign-ins, shell history), and beside them what servers legitimately read: Maven's and
// Gradle's caches (Java servers), Gemini's settings.
var homeCredentials = map[string]string{
	".pgpass":                        "db:5432:*:admin:s3cret",
	".my.cnf":                        "[client]\npassword=s3cret\n",
	".s3cfg":                         "[default]\nsecret_key = s3cret\n",
	".config/rclone/rclone.conf":     "[drive]\ntoken = s3cret\n",
	".gemini/oauth_creds.json":       `{"refresh_token":"s3cret"}`,
	".yarnrc.yml":                    "npmAuthToken: s3cret\n",
	".local/share/fish/fish_history": "- cmd: export TOKEN=s3cret\n",
	".m2/settings.xml":               "<password>s3cret</password>",
	".m2/settings-security.xml":      "<master>s3cret</master>",
	".gradle/gradle.properties":      "signing.password=s3cret\n",
	// Other MCP hosts' configs: their servers' env holds tokens.
	".cursor/mcp.json":                          `{"mcpServers": {"gh": {"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "s3cret"}}}}`,
	".config/Claude/claude_desktop_config.json": `{"mcpServers": {"gh": {"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "s3cret"}}}}`,
	".codeium/windsurf/mcp_config.json":         `{"mcpServers": {"gh": {"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "s3cret"}}}}`,
	".config/Code/User/mcp.json":                `{"servers": {"gh": {"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "s3cret"}}}}`,
	".continue/config.yaml":                     "models:\n  - apiKey: s3cret\n",
}

var homeReadable = map[string]string{
	".m2/repository/org/x/x-1.pom":   "<project/>",
	".gradle/caches/modules-2/x.jar": "jar",
	".gemini/settings.json":          "{}",
}

// TestEscapesHomeCredentials (attack): with the home folder open as the workspace (granted child
// by child), the escaper reads database, cloud storage, package registry and AI tool credentials
// and shell history kept there; each is refused, while ~/.m2/repository, ~/.gradle/caches and
// Gemini's settings beside them stay readable.
func TestEscapesHomeCredentials(t *testing.T) {
	requireLandlock(t)
	testHomeCredentials(t, true)
}

// TestEscapesHomeCredentialsUnconfined is the control: unconfined, each of those reads works.
func TestEscapesHomeCredentialsUnconfined(t *testing.T) {
	testHomeCredentials(t, false)
}

func testHomeCredentials(t *testing.T, confined bool) {
	w := newWorld(t)
	w.workspace = []string{w.home}
	var escapes, allowed []string
	for files, into := range map[*map[string]string]*[]string{&homeCredentials: &escapes, &homeReadable: &allowed} {
		for rel, body := range *files {
			p := filepath.Join(w.home, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			*into = append(*into, "read:"+p)
		}
	}
	actions := append(slices.Clone(escapes), allowed...)
	if !confined {
		got := runUnconfined(t, w, actions...)
		for _, a := range actions {
			if r := got[a]; !r.OK {
				t.Errorf("unconfined %s failed: %+v", a, r)
			}
		}
		return
	}
	got := runConfined(t, w, Profile{}, Options{}, actions...)
	for _, a := range escapes {
		if r, ok := got[a]; !ok || r.OK {
			t.Errorf("%s: escaped or no result: %+v", a, r)
		}
	}
	for _, a := range allowed {
		if r, ok := got[a]; !ok || !r.OK {
			t.Errorf("%s: refused: %+v", a, r)
		}
	}
}
