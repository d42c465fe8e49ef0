package config

import "fmt"

// Protocol eras (issue 29): an entry's "protocol" is ProtocolAuto (the default, also ""),
// ProtocolLegacy or ProtocolModern. The era machinery itself is mcpbridge's (era.go); config
// only checks what a file may say, without importing mcp-go.
const (
	ProtocolAuto   = "auto"
	ProtocolLegacy = "2025-11-25" // mcp.ProtocolVersion20251125 (mcpbridge checks the spelling)
	ProtocolModern = "2026-07-28" // mcp.ProtocolVersion20260728
)

// CheckProtocol validates an entry's "protocol" for the transport typ; "" is auto.
func CheckProtocol(p, typ string) error {
	switch p {
	case "", ProtocolAuto, ProtocolLegacy:
		return nil
	case ProtocolModern:
		if typ == TransportSSE {
			return fmt.Errorf("%s has no SSE transport: use \"type\": \"http\"", ProtocolModern)
		}
		return nil
	}
	return fmt.Errorf("must be %q, %q or %q, not %q", ProtocolAuto, ProtocolLegacy, ProtocolModern, p)
}
