package main

import (
	"context"
	"log/slog"

	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// answerWithDefaults accepts a form elicitation with every field's default; a required field
// without one gets the plainest value its type allows (optional ones are left out). A url
// elicitation is declined: nobody is there to open the page.
func answerWithDefaults(log *slog.Logger) func(context.Context, mcpbridge.Elicitation) mcpbridge.ElicitResult {
	return func(_ context.Context, e mcpbridge.Elicitation) mcpbridge.ElicitResult {
		if e.Mode != "form" {
			log.Info("elicitation declined (url mode)", "url", e.URL)
			return mcpbridge.ElicitResult{Action: mcpbridge.ElicitDecline}
		}
		content := map[string]any{}
		for _, f := range e.Fields {
			switch {
			case f.Default != nil:
				content[f.Name] = f.Default
			case f.Required:
				content[f.Name] = plainValue(f)
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

// plainValue is a value of f's type within its bounds: the first choice, the minimum, true.
func plainValue(f mcpbridge.ElicitField) any {
	switch f.Type {
	case "boolean":
		return true
	case "number", "integer":
		if f.Minimum != nil {
			return *f.Minimum
		}
		return 0
	case "array":
		n := 0
		if f.MinItems != nil {
			n = min(*f.MinItems, len(f.Enum))
		}
		return f.Enum[:n]
	default:
		if len(f.Enum) > 0 {
			return f.Enum[0]
		}
		v := ""
		if f.MinLength != nil {
			for len(v) < *f.MinLength {
				v += "x"
			}
		}
		return v
	}
}
