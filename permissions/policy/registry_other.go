//go:build !windows

package policy

// readRegistry: only Windows has a registry.
func (b *builder) readRegistry(from string) {}
