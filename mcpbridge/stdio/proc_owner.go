package stdio

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// ownerVar marks every process a stdio server starts, and everything they start in turn (the
// environment is inherited, whatever process group or session a descendant moves to): its value
// is "<host pid>.<host start time>.<server start number>". It lets the host find a server's
// strays when it closes the server, and lets the next host find what a crashed host left behind
// (SweepOrphans), without trusting a pid alone: a process is signalled only when its own
// environment names a host that is no longer running. A descendant that clears its environment
// escapes this (it is still killed with the process group unless it also left the group).
const ownerVar = "SWITCHBOARD_MCP_OWNER"

var (
	// ownerHost is hostIdentity, read once when first needed rather than in package
	// initialisation, where reading /proc took about 0.4 ms of every start of every command
	// (Prewarm reads it off the start's path).
	ownerHost = sync.OnceValue(hostIdentity)
	ownerSeq  atomic.Int64
)

// hostIdentity is "<pid>.<start time>" of this process; the start time (in clock ticks since
// boot, Linux) tells a live host from a later process that reuses its pid.
func hostIdentity() string {
	return strconv.Itoa(os.Getpid()) + "." + strconv.FormatUint(procStartTime(os.Getpid()), 10)
}

// newOwnerTag is the marker value for one server start.
func newOwnerTag() string { return fmt.Sprintf("%s.%d", ownerHost(), ownerSeq.Add(1)) }

// OwnerVar is the name of the variable that marks a server's processes (ownerVar).
const OwnerVar = ownerVar

// ProcStartTime is pid's start time in clock ticks since boot (Linux; 0 elsewhere or when
// unreadable): with the pid, it tells a live process from a later one that reuses its pid.
func ProcStartTime(pid int) uint64 { return procStartTime(pid) }

// OwnerEnv is the ownerVar entry for a child that this process starts without the stdio
// transport (the shared-server daemon's children): marked so, SweepOrphans finds what a killed
// process of this kind left behind. kind prefixes the start number ("broker-").
func OwnerEnv(kind string) string {
	return ownerVar + "=" + ownerHost() + "." + kind + strconv.FormatInt(ownerSeq.Add(1), 10)
}

// parseOwner splits a marker value into host pid, host start time and the whole tag.
func parseOwner(v string) (pid int, start uint64, ok bool) {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	return pid, start, err1 == nil && err2 == nil && pid > 0
}
