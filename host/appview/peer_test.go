package appview

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// getEnv makes the test binary, run as another user, fetch that address and print the status.
const getEnv = "APPVIEW_TEST_GET"

func TestMain(m *testing.M) {
	if u := os.Getenv(getEnv); u != "" {
		res, err := http.Get(u)
		if err != nil {
			fmt.Println("refused:", err)
			os.Exit(0)
		}
		body, _ := io.ReadAll(res.Body)
		fmt.Println("status", res.StatusCode, len(body))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestOtherUserRefused: another user of the machine can connect to 127.0.0.1 too, and read the
// page's one-time address from the command line the editor opened the browser with (xdg-open's,
// the browser's: any user can list them). Loading it first, it would take the view's tool input
// and result and the relay's secret (the view's calls, its context for the model), and the
// person's browser would get "already used". The server answers only connections of its own user.
func TestOtherUserRefused(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("needs root on Linux to run a process as another user")
	}
	s, _ := newTestServer(t, Options{})
	u := open(t, s)

	dir, err := os.MkdirTemp("", "appview-other-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "appview.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = []string{getEnv + "=" + u}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as another user: %v (%s)", err, out)
	}
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, "refused") {
		t.Errorf("another user's request: %q, want the connection refused", got)
	}
	// The person's own browser (this user) still gets the page: the token was not taken.
	loadPage(t, u)
}
