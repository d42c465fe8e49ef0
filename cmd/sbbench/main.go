// Command sbbench measures Switchboard side by side with a bare mcp-go client and with mcp-hub
// (the hub behind mcphub.nvim) on the same MCP server (cmd/mcptest), and prints one table.
//
// Every figure is the median of several runs; the ratios compare figures taken in the same run
// of sbbench, so a loaded machine slows every subject alike. See README.md for the method.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

type config struct {
	switchboard string // path to the switchboard binary
	mcptest     string // path to the mcptest binary
	node        string
	hubJS       string // mcp-hub dist/cli.js; "" = skip mcp-hub
	everything  string // server-everything dist/index.js; "" = skip its rows
	manyTools   int    // dummy tools on the big server of the tool-count rows
	runs        int    // runs per figure
	calls       int    // timed calls per round-trip run
	warmup      int    // untimed calls before each round-trip run
	warmServer  int    // more untimed calls for the server-everything rows (node's JIT settles)
	serverCalls int    // timed calls per round-trip run of the server-everything rows
	burst       int    // calls per throughput burst
	bigRuns     int    // runs per big-result figure
	counts      []int  // server counts for the ready-time rows
	bigSizes    []int  // result sizes for the big-result rows
	poll        time.Duration
	only        map[string]bool
	verbose     bool
	work        string // scratch dir (XDG homes, configs)
	profiles    string // "" or the dir each host writes its CPU profile into (serve --cpuprofile)
	compare     string // "" or a second switchboard binary, a fifth server-everything subject
}

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] { // hidden: the baseline measured in a process of its own
		case "_hold":
			os.Exit(childHold(os.Args[2:]))
		case "_big":
			os.Exit(childBig(os.Args[2:]))
		case "_relay":
			os.Exit(childRelay(os.Args[2:]))
		case "_translate":
			os.Exit(childTranslator(os.Args[2:]))
		case "agent": // the scripted-model benchmark of tool search, in process
			os.Exit(runAgent(os.Args[2:], os.Stdout, os.Stderr))
		}
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sbbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	var counts, sizes, only string
	quick := fs.Bool("quick", false, "small counts for CI (runs 3, calls 30, big runs 1, sizes 5 MB and 50 MB)")
	fs.StringVar(&cfg.switchboard, "switchboard", "", "switchboard binary (default: go build ./cmd/switchboard into a temp dir)")
	fs.StringVar(&cfg.mcptest, "mcptest", "", "mcptest binary (default: go build ./cmd/mcptest into a temp dir)")
	fs.StringVar(&cfg.node, "node", "node", "node binary for mcp-hub")
	fs.StringVar(&cfg.hubJS, "mcp-hub", "", "mcp-hub's dist/cli.js (default: .cache/mcp-hub/node_modules/mcp-hub/dist/cli.js under the repo root; \"none\" skips mcp-hub)")
	fs.StringVar(&cfg.everything, "everything", "", "@modelcontextprotocol/server-everything's dist/index.js (default: under .cache/server-everything in the repo root; \"none\" skips it)")
	fs.IntVar(&cfg.manyTools, "many-tools", 1000, "dummy tools on the server of the tool-count rows")
	fs.IntVar(&cfg.runs, "runs", 7, "runs per figure (each figure is the median of the runs)")
	fs.IntVar(&cfg.calls, "calls", 200, "timed tool calls per round-trip run (a run's figure is the median call)")
	fs.IntVar(&cfg.warmup, "warmup", 20, "untimed calls before each round-trip run")
	fs.IntVar(&cfg.warmServer, "server-warmup", 3000, "more untimed calls per subject before the server-everything rows, so node's JIT has settled (0: measure node cold, as before 2026-12-02)")
	fs.IntVar(&cfg.serverCalls, "server-calls", 2000, "timed calls per round-trip run of the server-everything rows")
	fs.IntVar(&cfg.burst, "burst", 2000, "calls per burst of the 8-caller throughput rows")
	fs.IntVar(&cfg.bigRuns, "big-runs", 3, "runs per big-result figure")
	fs.StringVar(&counts, "servers", "1,10,30", "server counts for the ready-time rows; the largest is also used for memory")
	fs.StringVar(&sizes, "sizes", "5,50", "big-result sizes in MB (10^6 bytes)")
	fs.StringVar(&only, "only", "rt,ready,mem,big,tools,everything,first,shared", "sections to run: rt (round trip), ready, mem, big, "+
		"tools (tool-count sweep), everything (server-everything round trip and 8 callers), first (first call after start), "+
		"shared (shared servers in the daemon: memory of 6 windows, p50, a second window's first call)")
	fs.DurationVar(&cfg.poll, "poll", 5*time.Millisecond, "poll interval while waiting for readiness (both hosts)")
	fs.BoolVar(&cfg.verbose, "v", false, "log each run to stderr")
	fs.StringVar(&cfg.work, "work", "", "scratch dir (default: a temp dir, removed at the end)")
	fs.StringVar(&cfg.compare, "compare", "", "a second switchboard `BINARY` (say, the build before a change): the server-everything rows run it as a fifth interleaved subject and the first-call row as a third, and compare it with --switchboard")
	fs.StringVar(&cfg.profiles, "host-profiles", "", "write each switchboard host's CPU profile into `DIR` (serve --cpuprofile; `go tool pprof DIR/*.pprof` reads them together)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *quick {
		cfg.runs, cfg.calls, cfg.warmup, cfg.bigRuns, cfg.warmServer, cfg.serverCalls, cfg.burst = 3, 30, 5, 1, 100, 30, 100
	}
	var err error
	if cfg.counts, err = parseInts(counts); err != nil {
		fmt.Fprintln(stderr, "sbbench: --servers:", err)
		return 2
	}
	if cfg.bigSizes, err = parseInts(sizes); err != nil {
		fmt.Fprintln(stderr, "sbbench: --sizes:", err)
		return 2
	}
	for i := range cfg.bigSizes {
		cfg.bigSizes[i] *= 1_000_000
	}
	cfg.only = map[string]bool{}
	for s := range strings.SplitSeq(only, ",") {
		cfg.only[strings.TrimSpace(s)] = true
	}
	if cfg.work == "" {
		d, err := os.MkdirTemp("", "sbbench-")
		if err != nil {
			fmt.Fprintln(stderr, "sbbench:", err)
			return 1
		}
		defer os.RemoveAll(d)
		cfg.work = d
	}
	if cfg.compare != "" {
		if _, err := os.Stat(cfg.compare); err != nil {
			fmt.Fprintln(stderr, "sbbench: --compare:", err)
			return 2
		}
		if !cfg.only["everything"] && !cfg.only["first"] {
			fmt.Fprintln(stderr, "sbbench: --compare only adds to the server-everything and first-call rows, and --only leaves them out")
		}
	}
	if cfg.profiles != "" {
		if err := os.MkdirAll(cfg.profiles, 0o755); err != nil {
			fmt.Fprintln(stderr, "sbbench: --host-profiles:", err)
			return 2
		}
	}
	if err := cfg.resolveBinaries(stderr); err != nil {
		fmt.Fprintln(stderr, "sbbench:", err)
		return 1
	}
	b := &bench{cfg: cfg, log: stderr}
	rows, err := b.all()
	prows := b.perfRows()
	printTable(stdout, cfg, rows)
	printPerfTable(stdout, prows)
	for _, r := range prows {
		if r.a.err != "" && !r.a.ok {
			err = errors.Join(err, fmt.Errorf("%s: %s", r.name, r.a.err))
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "sbbench:", err)
		return 1
	}
	return 0
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad number %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// resolveBinaries builds what was not given and finds mcp-hub.
func (c *config) resolveBinaries(log io.Writer) error {
	root, err := repoRoot()
	if err != nil && (c.switchboard == "" || c.mcptest == "") {
		return fmt.Errorf("not inside the switchboard repo and no --switchboard/--mcptest given: %w", err)
	}
	bin := filepath.Join(c.work, "bin")
	for _, b := range []struct {
		path *string
		pkg  string
	}{{&c.switchboard, "./cmd/switchboard"}, {&c.mcptest, "./cmd/mcptest"}} {
		if *b.path != "" {
			continue
		}
		out := filepath.Join(bin, filepath.Base(b.pkg))
		fmt.Fprintf(log, "sbbench: go build -o %s %s\n", out, b.pkg)
		cmd := exec.Command("go", "build", "-o", out, b.pkg)
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build %s: %w", b.pkg, err)
		}
		*b.path = out
	}
	for _, p := range []*string{&c.switchboard, &c.mcptest, &c.compare, &c.profiles} {
		if *p == "" {
			continue
		}
		if abs, err := filepath.Abs(*p); err == nil {
			*p = abs
		}
	}
	if c.hubJS != "" && c.hubJS != "none" {
		if abs, err := filepath.Abs(c.hubJS); err == nil {
			c.hubJS = abs
		}
	}
	if c.everything != "" && c.everything != "none" {
		if abs, err := filepath.Abs(c.everything); err == nil {
			c.everything = abs
		}
	}
	switch c.everything {
	case "none":
		c.everything = ""
	case "":
		if root != "" {
			p := filepath.Join(root, ".cache", "server-everything", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
			if _, err := os.Stat(p); err == nil {
				c.everything = p
			} else {
				fmt.Fprintf(log, "sbbench: server-everything not found at %s (run cmd/sbbench/run.sh to install it); skipping its rows\n", p)
			}
		}
	}
	switch c.hubJS {
	case "none":
		c.hubJS = ""
	case "":
		if root != "" {
			p := filepath.Join(root, ".cache", "mcp-hub", "node_modules", "mcp-hub", "dist", "cli.js")
			if _, err := os.Stat(p); err == nil {
				c.hubJS = p
			} else {
				fmt.Fprintf(log, "sbbench: mcp-hub not found at %s (run cmd/sbbench/run.sh to install it); skipping mcp-hub\n", p)
			}
		}
	}
	return nil
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", err
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", errors.New("go list -m: no module")
	}
	return dir, nil
}

// The MCP server under test and its tools (cmd/mcptest).
const (
	echoTool = "echo"
	bigTool  = "big"
)

func echoArgs(text string) map[string]any { return map[string]any{"text": text} }
func bigArgs(n int) map[string]any        { return map[string]any{"n": n} }

// row is one line of the table. Missing figures are NaN-free: ok=false.
type row struct {
	name, unit string
	sb, base   figure
	hub        figure
	goal       string  // "" = none
	goalRatio  float64 // sb/hub must be <= this (when > 0)
	strict     bool    // goal is "<" rather than "<="
	note       string
}

type figure struct {
	ok    bool
	v     float64
	runs  int    // runs that worked
	fails int    // runs that failed (the figure is the median of the others)
	err   string // the first failure
}

func fig(samples []float64) figure {
	if len(samples) == 0 {
		return figure{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var m float64
	if len(s)%2 == 1 {
		m = s[len(s)/2]
	} else {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return figure{ok: true, v: m, runs: len(s)}
}

func failed(err error) figure { return figure{err: err.Error()} }

func printTable(w io.Writer, cfg config, rows []row) {
	fmt.Fprintf(w, "machine: %s, %d CPUs (nproc), %s %s/%s; %s; load average at the end %s\n", cpuModel(), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, time.Now().UTC().Format("2006-01-02 15:04 MST"), loadAverage())
	fmt.Fprintf(w, "runs per figure: %d (big results: %d); timed calls per round-trip run: %d, after %d untimed "+
		"(server-everything: %d after %d more); calls per 8-caller burst: %d; figures are medians\n\n",
		cfg.runs, cfg.bigRuns, cfg.calls, cfg.warmup, cfg.serverCalls, cfg.warmServer, cfg.burst)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "| measurement | switchboard | bare mcp-go (baseline) | switchboard ÷ baseline | mcp-hub | switchboard ÷ mcp-hub | goal |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		goal := r.goal
		if r.goalRatio > 0 && r.sb.ok && r.hub.ok && r.hub.v > 0 {
			x := r.sb.v / r.hub.v
			met := x <= r.goalRatio
			if r.strict {
				met = x < r.goalRatio
			}
			if met {
				goal += fmt.Sprintf(" — met (%.4fx)", x)
			} else {
				goal += fmt.Sprintf(" — NOT met (%.4fx)", x)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.name,
			fmtFig(r.sb, r.unit), fmtFig(r.base, r.unit), ratio(r.sb, r.base),
			fmtFig(r.hub, r.unit), ratio(r.sb, r.hub), goal)
	}
	var notes []string
	for _, r := range rows {
		if r.note != "" {
			notes = append(notes, fmt.Sprintf("- %s: %s", r.name, r.note))
		}
		for _, f := range []struct {
			who string
			f   figure
		}{{"switchboard", r.sb}, {"baseline", r.base}, {"mcp-hub", r.hub}} {
			switch {
			case f.f.err != "" && !f.f.ok:
				notes = append(notes, fmt.Sprintf("- %s, %s: failed: %s", r.name, f.who, f.f.err))
			case f.f.fails > 0:
				notes = append(notes, fmt.Sprintf("- %s, %s: %d of %d runs failed (the figure is the median of the others): %s",
					r.name, f.who, f.f.fails, f.f.fails+f.f.runs, f.f.err))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
}

func fmtFig(f figure, unit string) string {
	if !f.ok {
		if f.err != "" {
			return "failed"
		}
		return "—"
	}
	switch unit {
	case "µs":
		return fmt.Sprintf("%.0f µs", f.v)
	case "ms":
		if f.v < 10 {
			return fmt.Sprintf("%.1f ms", f.v)
		}
		return fmt.Sprintf("%.0f ms", f.v)
	case "MB":
		return fmt.Sprintf("%.1f MB", f.v)
	}
	return fmt.Sprintf("%.2f %s", f.v, unit)
}

func ratio(a, b figure) string {
	if !a.ok || !b.ok || b.v == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2fx", a.v/b.v)
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// jsonString is a tiny helper for hidden-subcommand arguments.
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// withTimeout is context.WithTimeout from Background; every wait in sbbench is bounded.
func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
