package mcpbridge

import "testing"

// Every warm-up sample still fits the type it warms: one that no longer decodes warms nothing.
func TestWarmCodecs(t *testing.T) {
	for i, step := range warmSteps {
		if err := step(); err != nil {
			t.Errorf("step %d: %v", i, err)
		}
	}
	WarmCodecs() // and all of it together, as serve runs it
}
