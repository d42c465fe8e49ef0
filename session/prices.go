package session

import (
	"bytes"
	"encoding/json"
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
// {"claude-sonnet-4-5": {"input": 3, "cachedInput": 0.3, "cacheWrite": 3.75, "output": 15}}. It is
// kept as canonical JSON text so that ProviderConfig stays comparable with ==.
type Prices string

// UnmarshalJSON checks the object (unknown fields and negative prices are errors) and keeps it
// canonical.
func (p *Prices) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*p = ""
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m map[string]Price
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("prices: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		pr := m[name]
		if pr.Input < 0 || pr.CachedInput < 0 || pr.CacheWrite < 0 || pr.Output < 0 {
			return fmt.Errorf("prices: %q: a price is negative", name)
		}
	}
	if len(m) == 0 {
		*p = ""
		return nil
	}
	c, _ := json.Marshal(m) // ignore error: floats and strings always encode; keys sorted
	*p = Prices(c)
	return nil
}

// MarshalJSON writes the object (null when empty).
func (p Prices) MarshalJSON() ([]byte, error) {
	if p == "" {
		return []byte("null"), nil
	}
	return []byte(p), nil
}

// For returns the price of model.
func (p Prices) For(model string) (Price, bool) {
	if p == "" {
		return Price{}, false
	}
	var m map[string]Price
	if json.Unmarshal([]byte(p), &m) != nil {
		return Price{}, false
	}
	pr, ok := m[model]
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
