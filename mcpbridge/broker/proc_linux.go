package broker

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// spawner runs every cmd.Start on one goroutine locked to an OS thread that never exits:
// PR_SET_PDEATHSIG fires when the thread that forked the child exits, not the process.
var spawner struct {
	once sync.Once
	jobs chan func()
}

// spawn starts cmd with SIGKILL as its parent-death signal: a daemon killed by SIGKILL takes its
// servers with it (their own children are left to the owner-tag sweep).
func spawn(cmd *exec.Cmd) error {
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawner.once.Do(func() {
		spawner.jobs = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: this goroutine and its thread live forever
			for job := range spawner.jobs {
				job()
			}
		}()
	})
	errc := make(chan error, 1)
	spawner.jobs <- func() { errc <- cmd.Start() }
	return <-errc
}

// procStartTime is field 22 of /proc/PID/stat (0 when unreadable): with the pid, it tells a
// live process from a later one that reuses its pid.
func procStartTime(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

const (
	sysPidfdOpen       = 434 // the same number on every Linux architecture
	sysPidfdSendSignal = 424
)

// sweepOrphans SIGKILLs what the servers of a host (a daemon or a window) that no longer runs
// left behind: every process whose environment carries ownerVar naming a host pid whose start
// time no longer matches. A killed daemon's servers die with it (parent-death signal), but their
// own children do not; the next daemon's start finds them here. Each process is opened as a
// pidfd before its environment is read and signalled through it, so a reused pid is never hit.
// It returns how many processes it signalled.
func sweepOrphans() int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	prefix := []byte(ownerVar + "=")
	killed := 0
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
		if errno != 0 {
			continue
		}
		env, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err == nil {
			for kv := range bytes.SplitSeq(env, []byte{0}) {
				if tag, ok := bytes.CutPrefix(kv, prefix); ok && ownerDead(string(tag)) {
					if _, _, e := syscall.Syscall6(sysPidfdSendSignal, fd, uintptr(syscall.SIGKILL), 0, 0, 0, 0); e == 0 {
						killed++
					}
					break
				}
			}
		}
		syscall.Close(int(fd)) // ignore error: a pidfd we opened
	}
	return killed
}

// ownerDead reports whether the host named by an owner tag ("pid.start.seq") is gone. A tag
// without a start time is left alone: a live host could not be told from a dead one.
func ownerDead(tag string) bool {
	parts := strings.Split(tag, ".")
	if len(parts) != 3 {
		return false
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 || start == 0 || pid == os.Getpid() {
		return false
	}
	alive := procStartTime(pid)
	return alive == 0 || alive != start
}
