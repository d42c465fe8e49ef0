package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkStartOverhead measures a server's start-up with and without the sandbox, in the same
// run, interleaved: from Start (Resolve included for the sandboxed one) to the server's exit, for
// a server that exits at once. It reports the medians of 11 of each and their difference (the
// issue's budget: 50 ms), in wall time and in the CPU time the process used (user + system, the
// launcher's included: it is the same process as the server), which a loaded machine inflates
// less.
//
//	go test -run '^$' -bench StartOverhead -benchtime 1x ./mcpbridge/sandbox
//
// SWITCHBOARD_SANDBOX_LAUNCHER=path/to/switchboard measures the real binary as the launcher (its
// packages' initialisation runs before main calls Main); the test binary is the default.
func BenchmarkStartOverhead(b *testing.B) {
	requireLandlock(b)
	esc := escaperPath(b)
	home := b.TempDir()
	env := Env{Home: home, Workspace: []string{b.TempDir()}, StateDir: b.TempDir(), Protected: []string{b.TempDir()}, Command: esc}
	cpu := func(cmd *exec.Cmd) time.Duration {
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var cp, cs []time.Duration
	plain := func() time.Duration {
		t0 := time.Now()
		cmd := exec.Command(esc)
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		cp = append(cp, cpu(cmd))
		return time.Since(t0)
	}
	boxed := func() time.Duration {
		t0 := time.Now()
		plan, err := Resolve(Profile{}, env)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(esc)
		sb, err := Wrap(cmd, plan, Options{Launcher: os.Getenv("SWITCHBOARD_SANDBOX_LAUNCHER")})
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if err := sb.Started(); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		sb.Close()
		cs = append(cs, cpu(cmd))
		return time.Since(t0)
	}
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	for b.Loop() {
		var p, s []time.Duration
		cp, cs = nil, nil
		for range 11 {
			p = append(p, plain())
			s = append(s, boxed())
		}
		mp, ms := median(p), median(s)
		b.ReportMetric(float64(mp.Microseconds())/1000, "plain-ms")
		b.ReportMetric(float64(ms.Microseconds())/1000, "sandboxed-ms")
		b.ReportMetric(float64((ms-mp).Microseconds())/1000, "overhead-ms")
		b.ReportMetric(float64((median(cs)-median(cp)).Microseconds())/1000, "cpu-overhead-ms")
	}
}
