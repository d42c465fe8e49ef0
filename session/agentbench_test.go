package session_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/session/sessiontest/agentbench"
)

// The scripted-model benchmark of issue 18 (300 tools, 10 servers, a 5-step turn), as a test: with
// tool search every tool is still reached, and the schema bytes sent are at least 10x fewer than
// with every tool in every request. `sbbench agent` prints the table (make bench).
func TestAgentBenchToolSearch(t *testing.T) {
	res, err := agentbench.Run(context.Background(), 10, 30, 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reached != res.Total {
		t.Errorf("the scripted model reached %d of %d tools", res.Reached, res.Total)
	}
	if len(res.Steps) != 5 {
		t.Errorf("%d model calls, want 5", len(res.Steps))
	}
	sum := res.Sum()
	if sum.ToolBytes*10 > sum.AllToolByte {
		t.Errorf("schema bytes with search %d, without %d: less than 10x fewer", sum.ToolBytes, sum.AllToolByte)
	}
	for i, s := range res.Steps {
		t.Logf("step %d: %d tools %d B (body %d B); without search %d tools %d B (body %d B)", i+1, s.Tools, s.ToolBytes, s.BodyBytes, s.AllTools, s.AllToolByte, s.AllBody)
	}
	t.Logf("total schema bytes: %d with search, %d without: %.1fx fewer", sum.ToolBytes, sum.AllToolByte, float64(sum.AllToolByte)/float64(sum.ToolBytes))
}
