package stdio

// AliasRaw is a json.RawMessage that aliases the decoder's input instead of copying it.
// encoding/json hands UnmarshalJSON a sub-slice of the input; its user owns every input it
// decodes this way (a frame read for this purpose only) and never reuses it, so aliasing is safe
// and saves one copy of a large result. mcpbridge's TestDecodeAliasesInput guards the assumption.
type AliasRaw []byte

func (a *AliasRaw) UnmarshalJSON(b []byte) error {
	*a = b
	return nil
}
