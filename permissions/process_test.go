package permissions

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Child processes: the test binary re-executes itself with PERMISSIONS_TEST_CHILD set.
const childEnv = "PERMISSIONS_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "rewrite":
		childRewrite()
	case "replace":
		childReplace()
	case "set":
		childSet()
	}
	fmt.Fprintf(os.Stderr, "unknown child %q\n", os.Getenv(childEnv))
	os.Exit(2)
}

func child(t *testing.T, kind string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{childEnv + "=" + kind}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "child: "+format+"\n", args...)
	os.Exit(3)
}

var (
	crashListA = []string{"mcp__crash__a", "mcp__crash__b"}
	crashListB = []string{"mcp__crash__c", "mcp__crash__d", "mcp__crash__e"}
)

// childRewrite alternates the crash prefix between two lists, reporting each completed write on
// stdout, until it is killed.
func childRewrite() {
	a, _ := OpenAllowlist(os.Getenv("ALLOWLIST"))
	w := bufio.NewWriter(os.Stdout)
	for i := 0; i < 1_000_000; i++ {
		list := crashListA
		if i%2 == 0 {
			list = crashListB
		}
		if _, err := a.Replace("mcp__crash__", list); err != nil {
			die("replace: %v", err)
		}
		w.WriteString("w\n")
		w.Flush()
	}
	os.Exit(0)
}

// childReplace appends one entry to its own prefix, 100 times, building each list from what is
// on disk: an update lost by the other writer would show up as a missing entry.
func childReplace() {
	a, _ := OpenAllowlist(os.Getenv("ALLOWLIST"))
	prefix := os.Getenv("PREFIX")
	for i := range 100 {
		if err := a.Reload(); err != nil {
			die("reload: %v", err)
		}
		var own []string
		for _, e := range a.Entries() {
			if strings.HasPrefix(e, prefix) {
				own = append(own, e)
			}
		}
		if len(own) != i {
			die("iteration %d: %d entries under %s on disk, want %d: update lost: %q", i, len(own), prefix, i, own)
		}
		if _, err := a.Replace(prefix, append(own, prefix+"t"+strconv.Itoa(i))); err != nil {
			die("replace: %v", err)
		}
	}
	os.Exit(0)
}

// childSet does one Replace.
func childSet() {
	a, _ := OpenAllowlist(os.Getenv("ALLOWLIST"))
	if _, err := a.Replace(os.Getenv("PREFIX"), strings.Fields(os.Getenv("ENTRIES"))); err != nil {
		die("replace: %v", err)
	}
	os.Exit(0)
}

func TestCrashSafety(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("atomic rename needs Unix (renameio/maybe writes in place on Windows)")
	}
	runs := 200
	if testing.Short() {
		runs = 20
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "allow_tool")
	const head = "# crash test\nmcp__keep__*\n\n"
	writeFile(t, path, head+strings.Join(crashListA, "\n")+"\n")
	okA := append([]string{"mcp__keep__*"}, crashListA...)
	okB := append([]string{"mcp__keep__*"}, crashListB...)
	for i := range runs {
		cmd := child(t, "rewrite", "ALLOWLIST="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill at a random moment: sometimes during start-up, usually after 0-9 completed writes
		// plus a random amount of busy work, while the child keeps writing.
		if n := rand.IntN(12); n > 0 {
			r := bufio.NewReader(out)
			for range n - 1 {
				if _, err := r.ReadString('\n'); err != nil {
					t.Fatalf("run %d: child ended early: %v", i, err)
				}
			}
			for range rand.IntN(2000) {
				runtime.Gosched()
			}
		}
		cmd.Process.Kill() // SIGKILL
		cmd.Wait()

		a, _ := OpenAllowlist(path)
		if err := a.Err(); err != nil {
			t.Fatalf("run %d: file does not parse after SIGKILL: %v", i, err)
		}
		got := a.Entries()
		if !slices.Equal(got, okA) && !slices.Equal(got, okB) {
			t.Fatalf("run %d: entries %q are neither the old nor the new list", i, got)
		}
		if data := readFile(t, path); !strings.HasPrefix(data, head) {
			t.Fatalf("run %d: header lost:\n%s", i, data)
		}
	}
	// The next write cleans up temp files that killed writers left behind.
	a, _ := OpenAllowlist(path)
	if _, err := a.Replace("mcp__crash__", nil); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".allow_tool*")); len(m) != 0 {
		t.Errorf("stale temp files: %q", m)
	}
}

func TestConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "allow_tool")
	writeFile(t, path, "# two writers\nmcp__keep__x\n")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		cmd := child(t, "replace", "ALLOWLIST="+path, fmt.Sprintf("PREFIX=mcp__p%d__", i))
		wg.Go(func() { errs[i] = cmd.Run() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	a, _ := OpenAllowlist(path)
	if a.Err() != nil {
		t.Fatal(a.Err())
	}
	count := map[string]int{}
	for _, e := range a.Entries() {
		count[e[:min(len(e), len("mcp__p0__"))]]++
	}
	if diff := cmp.Diff(map[string]int{"mcp__keep": 1, "mcp__p0__": 100, "mcp__p1__": 100}, count); diff != "" {
		t.Errorf("entries per prefix (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(readFile(t, path), "# two writers\nmcp__keep__x\n") {
		t.Errorf("header lost:\n%s", readFile(t, path))
	}
}

func TestWatchOtherProcess(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "allow_tool")
	writeFile(t, path, "write_file\n")
	a, _ := OpenAllowlist(path)
	a.debounce = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	changed := make(chan struct{}, 16)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- a.watch(ctx, func() { changed <- struct{}{} }, func() { close(ready) })
	}()
	<-ready
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(30 * time.Second): // a failure deadline, not a timing assertion
			t.Fatalf("no change seen: %s", what)
		}
	}

	// Another process replaces the file atomically.
	cmd := child(t, "set", "ALLOWLIST="+path, "PREFIX=mcp__watch__", "ENTRIES=mcp__watch__*")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	wait("atomic replace by another process")
	if e, ok := a.Match("mcp__watch__tool"); !ok || e != "mcp__watch__*" {
		t.Errorf("after the other process's change: Match = %q, %v; entries %q", e, ok, a.Entries())
	}

	// Someone breaks the file by hand: it then grants nothing.
	tmp := filepath.Join(dir, "edit.tmp")
	writeFile(t, tmp, "write_file\nmcp__watch__*\nbroken line\n")
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	wait("malformed file")
	if a.Err() == nil || !strings.Contains(a.Err().Error(), path+":3:") {
		t.Errorf("Err() = %v, want %s:3", a.Err(), path)
	}
	if _, ok := a.Match("write_file"); ok {
		t.Error("malformed file still grants")
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch returned %v", err)
	}
}
