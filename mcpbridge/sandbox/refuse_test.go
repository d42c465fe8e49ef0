package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestKernelLacksLandlockRefuses: where the kernel lacks the Landlock ABI a sandbox needs, the
// server does not start (it never runs unconfined) and Started says why in a sentence.
func TestKernelLacksLandlockRefuses(t *testing.T) {
	requireLandlock(t)
	w := newWorld(t)
	marker := filepath.Join(w.state, "ran")
	plan, err := Resolve(Profile{}, w.env("/bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "echo ran > "+marker)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	sb, err := Wrap(cmd, plan, Options{minABI: 99})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = sb.Started()
	werr := cmd.Wait()
	if err == nil || !strings.Contains(err.Error(), "needs Landlock ABI 99") || !strings.Contains(err.Error(), "was not started") {
		t.Errorf("Started = %v, want the kernel's lack named", err)
	}
	var exit *exec.ExitError
	if !errors.As(werr, &exit) || exit.ExitCode() != exitLaunch {
		t.Errorf("launcher exit = %v, want status %d", werr, exitLaunch)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the server ran")
	}
	if !strings.Contains(stderr.String(), "needs Landlock ABI 99") {
		t.Errorf("stderr %q does not say why", stderr.String())
	}
}

// TestMissingCommandRefuses: an exec failure after confinement is reported, not hidden.
func TestMissingCommandRefuses(t *testing.T) {
	requireLandlock(t)
	w := newWorld(t)
	plan, err := Resolve(Profile{}, w.env("/bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	plan.Command = filepath.Join(w.state, "gone")
	cmd := exec.Command("gone")
	sb, err := Wrap(cmd, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = sb.Started()
	cmd.Wait()
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("Started = %v, want the exec failure", err)
	}
}

// TestWorkingFolderOutside: a server whose working folder the sandbox hides starts in its own
// folder (and says so) instead of failing or keeping a way into the hidden one.
func TestWorkingFolderOutside(t *testing.T) {
	requireLandlock(t)
	w := newWorld(t)
	hidden := filepath.Join(w.home, "Downloads")
	if err := os.MkdirAll(hidden, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hidden, "x.txt"), []byte("private"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := Resolve(Profile{}, w.env("/bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "pwd; cat x.txt")
	cmd.Dir = hidden
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	sb, err := Wrap(cmd, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := sb.Started(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := strings.TrimSpace(stdout.String()); got != w.state {
		t.Errorf("pwd = %q, want the server's own folder %s (stderr %s)", got, w.state, stderr.String())
	}
	if !strings.Contains(stderr.String(), "is outside the sandbox; the server starts in its own folder") {
		t.Errorf("stderr %q does not say so", stderr.String())
	}
}
