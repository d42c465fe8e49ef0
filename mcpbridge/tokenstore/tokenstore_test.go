package tokenstore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var cred = Credential{URL: "https://mcp.example/mcp", ClientID: "c1", AccessToken: "at-secret", RefreshToken: "rt-secret",
	ExpiresAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}

// roundTrip checks Save, Load, Delete on any store.
func roundTrip(t *testing.T, s Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Load(ctx, "srv"); !errors.Is(err, ErrNoCredential) {
		t.Fatalf("Load before Save: %v, want ErrNoCredential", err)
	}
	if err := s.Save(ctx, "srv", cred); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "srv")
	if err != nil || got.AccessToken != cred.AccessToken || got.RefreshToken != cred.RefreshToken || !got.ExpiresAt.Equal(cred.ExpiresAt) {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	if err := s.Delete(ctx, "srv"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "srv"); !errors.Is(err, ErrNoCredential) {
		t.Fatalf("Load after Delete: %v", err)
	}
	if err := s.Delete(ctx, "srv"); err != nil {
		t.Fatalf("Delete of nothing: %v", err)
	}
}

func TestFileStore(t *testing.T) {
	state := t.TempDir()
	p := DefaultPath(func(k string) (string, bool) {
		if k == "XDG_STATE_HOME" {
			return state, true
		}
		return "", false
	})
	if p != filepath.Join(state, "switchboard", "oauth-tokens.json") {
		t.Fatalf("DefaultPath = %s", p)
	}
	f := NewFile(p)
	roundTrip(t, f)
	if err := f.Save(context.Background(), "other", cred); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{p: 0o600, filepath.Dir(p): 0o700} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	// A second process's store (another instance) sees the same data.
	if c, err := NewFile(p).Load(context.Background(), "other"); err != nil || c.RefreshToken != cred.RefreshToken {
		t.Errorf("second instance Load = %+v, %v", c, err)
	}
}

// TestKeychainSecretService runs the keychain store against a real Secret Service: gnome-keyring
// in a D-Bus session of its own (dbus-run-session), started by re-running this test inside it.
// Outside CI it skips when those programs are missing; `make test` installs them.
func TestKeychainSecretService(t *testing.T) {
	if os.Getenv("SWITCHBOARD_IN_KEYRING_SESSION") == "1" {
		if err := ProbeKeychain(); err != nil {
			t.Fatalf("Secret Service not answering inside the test session: %v", err)
		}
		roundTrip(t, Keychain{})
		store, where := Default(nil)
		if _, ok := store.(Keychain); !ok || !strings.Contains(where, "keychain") {
			t.Errorf("Default = %T (%s), want the keychain", store, where)
		}
		// A keychain that stops answering (frozen, or an unlock prompt nobody answers): a call
		// ends with its context, which is what bounds it (host: storeTimeout; the registry's
		// close of a signed-in server), not whenever the keychain answers.
		thaw := freezeKeychain(t)
		defer thaw()
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() { _, err := Keychain{}.Load(ctx, "srv"); got <- err }()
		cancel()
		select {
		case err := <-got:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Load from a frozen keychain, its context cancelled: %v, want the context's error", err)
			}
		case <-time.After(time.Minute): // a hang guard, not a timing assertion
			t.Error("Load from a frozen keychain did not end with its context")
		}
		return
	}
	var missing []string
	for _, p := range []string{"dbus-run-session", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must run the Secret Service test: install %s (apt: dbus, gnome-keyring)", strings.Join(missing, ", "))
		}
		t.Skipf("Secret Service test skipped: %s not installed (apt-get install dbus gnome-keyring; `make test` does)", strings.Join(missing, ", "))
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	script := `printf test | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$0" -test.run '^TestKeychainSecretService$' -test.count=1 -test.v`
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "dbus-run-session", "--", "sh", "-c", script, exe)
	cmd.Env = append(os.Environ(), "SWITCHBOARD_IN_KEYRING_SESSION=1", "HOME="+home, "XDG_DATA_HOME="+home+"/data", "XDG_RUNTIME_DIR="+home)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestKeychainSecretService") {
		t.Fatalf("inside dbus-run-session + gnome-keyring: %v\n%s", err, out)
	}
}

func TestDefaultFallsBackToFile(t *testing.T) {
	if os.Getenv("SWITCHBOARD_IN_KEYRING_SESSION") == "1" {
		t.Skip("a keychain is running in this session")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	state := t.TempDir()
	store, where := Default(func(k string) (string, bool) {
		if k == "XDG_STATE_HOME" {
			return state, true
		}
		return "", false
	})
	if _, ok := store.(*File); !ok || where != filepath.Join(state, "switchboard", "oauth-tokens.json") {
		t.Errorf("Default without a bus = %T at %q, want the file store", store, where)
	}
}

func TestMemory(t *testing.T) { roundTrip(t, NewMemory()) }
