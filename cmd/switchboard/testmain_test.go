package main

// What every test of this package shares, on every system: TestMain (the sandbox launcher,
// a state folder of the run's own, and the binaries the end-to-end and fault tests start) and
// the bound on their waits. The fault tests themselves are Linux-only (faults_test.go); the
// helpers live here because tests built everywhere (auth, terminal) start the same binaries.

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
	"github.com/switchboard-dev/switchboard/permissions"
)

var fBins struct {
	switchboard, mcptest string
	err                  error
}

var fReport struct {
	mu    sync.Mutex
	lines []string
}

func fReportf(format string, args ...any) {
	fReport.mu.Lock()
	defer fReport.mu.Unlock()
	fReport.lines = append(fReport.lines, fmt.Sprintf(format, args...))
}

func TestMain(m *testing.M) {
	sandbox.Main() // this test binary is the launcher of the sandboxed servers it starts
	flag.Parse()
	// A test run never writes into the person's own state folder (eras.json, the audit log,
	// tasks.json): a test that wants a state folder sets its own, the others get this one.
	restoreState := isolateState()
	var dir string
	if !testing.Short() {
		var err error
		if dir, err = os.MkdirTemp("", "switchboard-faults-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fBins.err = fBuild(dir)
	}
	code := m.Run()
	if len(fReport.lines) > 0 && testing.Verbose() {
		fmt.Println("\nfault report:")
		for _, l := range fReport.lines {
			fmt.Println("  " + l)
		}
	}
	if dir != "" {
		os.RemoveAll(dir) // ignore error: temp dir
	}
	restoreState()
	os.Exit(code)
}

// isolateState points XDG_STATE_HOME at a new temporary folder and returns what removes it.
func isolateState() func() {
	dir, err := os.MkdirTemp("", "switchboard-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", dir)    // ignore error: a valid name
	return func() { os.RemoveAll(dir) } // ignore error: temp dir
}

// The tests' state folder is their own (TestMain): a test that writes eras.json, the audit log
// or tasks.json without a state folder of its own writes it there, not into the person's.
func TestStateFolderIsTheTestsOwn(t *testing.T) {
	if d := permissions.StateDir(); !strings.HasPrefix(d, os.TempDir()) {
		t.Fatalf("state folder %s: want one under %s", d, os.TempDir())
	}
}

func fBuild(dir string) error {
	flags := []string{"build"}
	if os.Getenv("SWITCHBOARD_FAULTS_RACE") == "1" {
		flags = append(flags, "-race")
	}
	fBins.switchboard = filepath.Join(dir, "switchboard")
	fBins.mcptest = filepath.Join(dir, "mcptest")
	for _, b := range []struct{ out, pkg string }{{fBins.switchboard, "."}, {fBins.mcptest, "../mcptest"}} {
		cmd := exec.Command("go", append(flags, "-o", b.out, b.pkg)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return nil
}

// faultBound bounds every wait; exceeding it is a failure (a hang), not a slow pass.
func faultBound() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("SWITCHBOARD_TEST_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 60 * time.Second
}

func needFaultBinaries(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("fault tests start real processes; skipped under -short")
	}
	if fBins.err != nil {
		t.Fatal(fBins.err)
	}
}
