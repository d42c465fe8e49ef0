package session

import (
	"fmt"
	"maps"
	"slices"
)

// Price is what one model costs, in US dollars per million tokens.
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cachedInput,omitempty"` // input read from the prompt cache; default Input
	CacheWrite  float64 `json:"cacheWrite,omitempty"`  // input written to the cache (Anthropic); default Input
	Output      float64 `json:"output"`
}

// Prices is the "prices" object of the provider config: model name -> Price, for example
// {"claude-sonnet-4-5": {"input": 3, "cachedInput": 0.3, "cacheWrite": 3.75, "output": 15}}.
// ProviderConfig holds a pointer to it so that the config stays comparable with ==.
type Prices map[string]Price

// check reports a negative price.
func (p *Prices) check() error {
	if p == nil {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(*p)) {
		pr := (*p)[name]
		if pr.Input < 0 || pr.CachedInput < 0 || pr.CacheWrite < 0 || pr.Output < 0 {
			return fmt.Errorf("session: provider prices: %q: a price is negative", name)
		}
	}
	return nil
}

// For returns the price of model.
func (p *Prices) For(model string) (Price, bool) {
	if p == nil {
		return Price{}, false
	}
	pr, ok := (*p)[model]
	return pr, ok
}

// Cost returns the cost of u in US dollars.
func (pr Price) Cost(u Usage) float64 {
	cached, write := pr.CachedInput, pr.CacheWrite
	if cached == 0 {
		cached = pr.Input
	}
	if write == 0 {
		write = pr.Input
	}
	uncached := max(u.InputTokens-u.CachedInputTokens-u.CacheWriteTokens, 0)
	return (float64(uncached)*pr.Input + float64(u.CachedInputTokens)*cached +
		float64(u.CacheWriteTokens)*write + float64(u.OutputTokens)*pr.Output) / 1e6
}
