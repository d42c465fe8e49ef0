package tokenstore

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// freezeKeychain stops (SIGSTOP) the gnome-keyring-daemon of this test's session, found by its
// HOME, and returns what lets it run again.
func freezeKeychain(t *testing.T) (thaw func()) {
	t.Helper()
	home := []byte("HOME=" + os.Getenv("HOME") + "\x00")
	ents, _ := os.ReadDir("/proc") // ignore error: none found
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + d.Name() + "/comm")   // ignore error: gone
		env, _ := os.ReadFile("/proc/" + d.Name() + "/environ") // ignore error: gone
		if string(bytes.TrimSpace(comm)) == "gnome-keyring-d" && bytes.Contains(env, home) {
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			return func() { syscall.Kill(pid, syscall.SIGCONT) } // ignore error: gone with the session
		}
	}
	t.Fatal("no gnome-keyring-daemon of this session")
	return nil
}
