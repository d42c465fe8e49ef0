package mcpbridge

import (
	"context"
	"fmt"
	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// mcptestBin is cmd/mcptest built once by TestMain for the subprocess tests.
var mcptestBin string

// brokerDirVar makes the test binary a shared-server daemon on that socket directory (the tests
// of shared servers start it as a window would start `switchboard daemon`).
const brokerDirVar = "MCPBRIDGE_TEST_BROKER_DIR"

func TestMain(m *testing.M) {
	sandbox.Main() // the sandbox's launcher is this binary when a test starts a sandboxed server
	if dir := os.Getenv(brokerDirVar); dir != "" {
		o := broker.Options{Dir: dir, Build: "test"}
		if f := broker.ReadyFromEnv(); f != nil {
			o.Ready = f
		}
		// SIGTERM ends it in good order, as `switchboard daemon` does: its windows attach again.
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		if err := broker.Serve(ctx, o); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Fuzz workers run only the fuzz target, which starts no server: skip the build there.
	if slices.ContainsFunc(os.Args, func(a string) bool { return strings.HasPrefix(a, "-test.fuzzworker") }) {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "mcpbridge-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mcptestBin = filepath.Join(dir, "mcptest")
	out, err := exec.Command("go", "build", "-o", mcptestBin, "github.com/switchboard-dev/switchboard/cmd/mcptest").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build mcptest: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// stdioCfg is a stdio config running mcptest with args.
func stdioCfg(name string, args ...string) config.ServerConfig {
	return config.ServerConfig{
		Name: name, Transport: config.TransportStdio, Command: mcptestBin, Args: args,
		StartupTimeout: 20 * time.Second, CallTimeout: 30 * time.Second, Source: "test",
	}
}

// newTestRegistry returns a registry closed at the end of the test.
func newTestRegistry(t testing.TB, opts Options) *Registry {
	t.Helper()
	r := NewRegistry(opts)
	t.Cleanup(func() { r.Close() })
	return r
}

// applyAndWait applies cfgs and waits until no server is starting.
func applyAndWait(t testing.TB, r *Registry, cfgs ...config.ServerConfig) map[string]ServerStatus {
	t.Helper()
	r.Apply(context.Background(), cfgs)
	wait := 60 * time.Second // or longer than the longest startup timeout given
	for _, c := range cfgs {
		wait = max(wait, c.StartupTimeout+10*time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := r.WaitIdle(ctx); err != nil {
		t.Fatalf("WaitIdle: %v (servers %+v)", err, r.Servers())
	}
	return statusMap(r)
}

func statusMap(r *Registry) map[string]ServerStatus {
	m := map[string]ServerStatus{}
	for _, s := range r.Servers() {
		m[s.Name] = s
	}
	return m
}

func toolNames(r *Registry) []string {
	var names []string
	for _, t := range r.Tools() {
		names = append(names, t.Name)
	}
	return names
}

// env is a getenv over m (a copy of config's test helper).
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}
