package stdio

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// groupAlive reports whether group pgid has a member that is not a zombie. Killed orphans stay
// zombies until init reaps them, which can take a while; they hold nothing and run nothing.
func groupAlive(pgid int) bool {
	if !groupAliveByKill(pgid) {
		return false
	}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := strconv.Itoa(pgid)
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 2 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// spawner runs every cmd.Start on one goroutine locked to its OS thread for the life of the
// process. PR_SET_PDEATHSIG fires when the *thread* that forked the child exits, not the process:
// a Go thread can exit (a goroutine that ends while locked to it takes it along), so a child
// forked from an arbitrary thread could be killed while the host runs. This thread never exits.
var spawner struct {
	once sync.Once
	jobs chan func()
}

// startChild starts cmd with SIGKILL as its parent-death signal: if the host dies, even by
// SIGKILL, the server dies with it. (Its own descendants do not get the signal: SweepOrphans on
// the next start and the owner marker cover them.)
func startChild(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawner.once.Do(startSpawner)
	errc := make(chan error, 1)
	spawner.jobs <- func() { errc <- cmd.Start() }
	return <-errc
}

func startSpawner() {
	spawner.jobs = make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: this goroutine and its thread live forever
		for job := range spawner.jobs {
			job()
		}
	}()
}

// Prewarm readies, in the background, what the first server's start would otherwise do first: the
// spawner's thread, and the runtime's one-time check that pidfds work (os.StartProcess forks a
// child that exits at once to find out). A host calls it as it starts, so that both run while it
// reads its settings and waits for the editor's initialize, on a core that is idle then, instead of
// between the editor's initialize and the first server's exec, where strace of cmd/sbbench's
// first-call runs showed the check's child (its cost alone was not measured without strace). It
// returns at once.
func Prewarm() {
	spawner.once.Do(startSpawner)
	go func() {
		_ = ownerHost() // the first server's marker, read now rather than on its spawn's path
		spawner.jobs <- func() {
			if p, err := os.FindProcess(os.Getpid()); err == nil { // runs the pidfd check once
				_ = p.Release() // ignore error: our own handle
			}
		}
	}()
}

// awaitExit returns once the process p has exited (it does not reap it: Wait does, at once). It
// waits in the runtime's poller on a pidfd, so a server that runs for hours does not hold an OS
// thread in a blocking wait4 (30 servers were 30 threads and their stacks); where pidfds cannot be
// polled (Linux before 5.10) it returns at once and Wait blocks as before.
func awaitExit(p *os.Process) {
	f := openPidfd(p)
	if f == nil {
		return
	}
	defer f.Close() // ignore error: our own pidfd
	waitPidfd(f)
}

// openPidfd opens p's pidfd in the runtime's poller (nil: no pidfd).
func openPidfd(p *os.Process) *os.File {
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(p.Pid), pidfdNonblock, 0)
	if errno != 0 {
		return nil
	}
	return os.NewFile(fd, "pidfd")
}

// waitPidfd returns once the pidfd f is readable: its process has exited.
//
// The callback asks the pidfd itself each time rather than assuming "not yet" the first time:
// Read begins by clearing what the poller has recorded for the file, so an exit the poller saw
// before the wait began (a server that ended while its wait was being set up, as when a host is
// shut down right after it started its servers) would otherwise never wake it, and Close, which
// waits for the exit, hung for good. A pidfd that the poller cannot take makes Read return after
// one look: Wait then blocks as it always did.
func waitPidfd(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(pidfdReadable) // ignore error: Wait reports the exit either way
}

// pidfdReadable reports whether the pidfd fd is readable now (its process has exited), or cannot
// be asked (then there is nothing to wait for here either).
func pidfdReadable(fd uintptr) bool {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(pfd, 0)
	if err == syscall.EINTR {
		// poll reports EINTR only when nothing was ready, and the poller's record was cleared
		// before this look: an exit still to come is recorded and wakes the wait.
		return false
	}
	return err != nil || n > 0
}

// pidfdNonblock is PIDFD_NONBLOCK (O_NONBLOCK), which makes the pidfd pollable by the runtime.
const pidfdNonblock = syscall.O_NONBLOCK

// procStartTime is field 22 of /proc/PID/stat (0 when unreadable).
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

// killMarked SIGKILLs every process (other than this one) whose environment carries ownerVar
// with a value that match accepts, and returns how many it signalled. Each process is opened as
// a pidfd before its environment is read and signalled through that pidfd, so a pid reused in
// between is never signalled: at worst the signal goes to the (dead) process that was checked.
func killMarked(match func(tag string) bool) int {
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
			continue // gone, or pidfd_open unsupported (Linux < 5.3): nothing is signalled
		}
		env, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err == nil {
			for kv := range bytes.SplitSeq(env, []byte{0}) {
				if tag, ok := bytes.CutPrefix(kv, prefix); ok && match(string(tag)) {
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

// killOwned kills every process still carrying the marker of one server start, and returns
// once they are signalled.
//
// Each look is a walk of all of /proc (every process opened as a pidfd, its environment read):
// about 2 ms per 100 processes, and a server's end asks for it twice (its exit, its Close). A
// host that closes its servers together (shutdown, a reload of the configuration) asks for it
// once per server at the same moment: those requests share walks (owners). A request waits for
// a walk that begins after it was made, so a process that was marked when it asked is seen.
func killOwned(tag string) {
	done := make(chan struct{})
	owners.mu.Lock()
	if owners.tags == nil {
		owners.tags = map[string]bool{}
	}
	owners.tags[tag] = true
	owners.waiting = append(owners.waiting, done)
	if !owners.walking {
		owners.walking = true
		go walkOwners()
	}
	owners.mu.Unlock()
	<-done
}

// owners is the requests of killOwned that the next walk of /proc serves.
var owners struct {
	mu      sync.Mutex
	walking bool                // walkOwners runs
	tags    map[string]bool     // the markers asked for since the current walk began
	waiting []chan struct{}     // closed once a walk that began after their request ends
	walks   int                 // walks made (tests)
	before  func(tags []string) // tests: called as each walk begins
}

// walkOwners walks /proc for every marker asked for, again and again while more are asked for
// during a walk.
func walkOwners() {
	for {
		owners.mu.Lock()
		if len(owners.waiting) == 0 {
			owners.walking = false
			owners.mu.Unlock()
			return
		}
		tags, waiting := owners.tags, owners.waiting
		owners.tags, owners.waiting = nil, nil
		owners.walks++
		before := owners.before
		owners.mu.Unlock()
		if before != nil {
			before(slices.Sorted(maps.Keys(tags)))
		}
		killMarked(func(t string) bool { return tags[t] })
		for _, done := range waiting {
			close(done)
		}
	}
}

// SweepOrphans kills what stdio servers of a host that is no longer running left behind (a host
// killed by SIGKILL cannot clean up; its servers die with it through their parent-death signal,
// but their own children do not). A host is taken as running when a process with its pid and its
// start time exists. Call it once at start-up; it returns how many processes it killed.
func SweepOrphans() int {
	return killMarked(func(tag string) bool {
		pid, start, ok := parseOwner(tag)
		if !ok || start == 0 {
			return false // no start time recorded: a live host could not be told from a dead one
		}
		if pid == os.Getpid() {
			return false // our own
		}
		alive := procStartTime(pid)
		return alive == 0 || alive != start
	})
}
