package broker

import (
	"os/exec"
	"runtime"
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
