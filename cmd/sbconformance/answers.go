package main

import (
	"context"
	"log/slog"

	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// answerWithDefaults accepts a form elicitation with every field's default (fields without one
// are left out), and declines a url elicitation: nobody is there to open the page.
func answerWithDefaults(log *slog.Logger) func(context.Context, mcpbridge.Elicitation) mcpbridge.ElicitResult {
	return func(_ context.Context, e mcpbridge.Elicitation) mcpbridge.ElicitResult {
		if e.Mode != "form" {
			log.Info("elicitation declined (url mode)", "url", e.URL)
			return mcpbridge.ElicitResult{Action: mcpbridge.ElicitDecline}
		}
		content := map[string]any{}
		for _, f := range e.Fields {
			if f.Default != nil {
				content[f.Name] = f.Default
			}
		}
		log.Info("elicitation accepted with the form's defaults", "fields", len(content))
		return mcpbridge.ElicitResult{Action: mcpbridge.ElicitAccept, Content: content}
	}
}

// sampleFixed answers a sampling request with a fixed text, as a model would answer.
func sampleFixed(_ context.Context, req mcpbridge.SampleRequest) (mcpbridge.SampleResult, error) {
	return mcpbridge.SampleResult{Model: "sbconformance", Text: "This is a sampled answer from the conformance client.", StopReason: "endTurn"}, nil
}
