//go:build !linux

package host

import "context"

// awaitProcessExit returns once the process pid has exited, or ctx is done (it looks every few
// seconds).
func awaitProcessExit(ctx context.Context, pid int) { pollProcessExit(ctx, pid) }
