package host

import (
	"context"
	"time"
)

// aLongTimeAgo is a deadline in the past: it ends a wait in the runtime's poller at once.
var aLongTimeAgo = time.Unix(1, 0)

// ownerPollEvery is how often pollProcessExit looks.
const ownerPollEvery = 5 * time.Second

// pollProcessExit returns once the process pid is no longer running (processAlive), or ctx is
// done, looking every ownerPollEvery.
func pollProcessExit(ctx context.Context, pid int) {
	t := time.NewTicker(ownerPollEvery)
	defer t.Stop()
	for processAlive(pid) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
