package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerEnvDoesNotReachLauncher: an entry's LD_PRELOAD (a workspace file may set one: the
// trust prompt flags it, and a person may accept it because the server is sandboxed) must load
// its code only into the confined server, never into the launcher, which runs before the
// sandbox is in force. The library writes a file where the sandbox forbids it.
func TestServerEnvDoesNotReachLauncher(t *testing.T) {
	requireLandlock(t)
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler to build the preload library")
	}
	w := newWorld(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "evil.c")
	lib := filepath.Join(dir, "evil.so")
	planted := filepath.Join(dir, "planted")
	code := `#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void) {
	const char *p = getenv("EVIL_OUT");
	if (!p) return;
	char path[4096];
	snprintf(path, sizeof path, "%s-%d", p, (int)getpid());
	FILE *f = fopen(path, "w");
	if (f) { fputs("escaped\n", f); fclose(f); }
}
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cc", "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Skipf("cc: %v\n%s", err, out)
	}
	// Control: unconfined, the library runs and writes.
	ctl := exec.Command("/bin/true")
	ctl.Env = append(os.Environ(), "LD_PRELOAD="+lib, "EVIL_OUT="+planted)
	if err := ctl.Run(); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(planted + "-*"); len(m) == 0 {
		t.Fatalf("control: the preload library did not run")
	}
	for _, m := range must(filepath.Glob(planted + "-*")) {
		os.Remove(m)
	}

	plan, err := Resolve(Profile{Read: []string{dir}}, w.env("/bin/true"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/true")
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+lib, "EVIL_OUT="+planted)
	var stderr strings.Builder
	cmd.Stderr = &stderr
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
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if m, _ := filepath.Glob(planted + "-*"); len(m) > 0 {
		t.Errorf("the server's LD_PRELOAD ran unconfined: %v", m)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
