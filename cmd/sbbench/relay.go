package main

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// childRelay is `sbbench _relay CMD ARGS...`: it runs CMD and copies its own stdin to CMD's stdin
// and CMD's stdout to its own stdout, byte for byte, until either side ends. It is what one more
// process between a client and its server costs at least (a pipe hop each way and a process to
// wake): the floor under any host that runs in a process of its own, measured beside the host.
//
// One thread polls both pipes; the system calls are raw (as in a C relay: the runtime is not told,
// so its monitor thread never wakes for them). Nothing in the loop allocates.
func childRelay(args []string) int {
	if len(args) == 0 {
		return 2
	}
	runtime.LockOSThread()
	inR, inW, err := os.Pipe()
	if err != nil {
		return 1
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return 1
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	if err := cmd.Start(); err != nil {
		return 1
	}
	inR.Close()
	outW.Close()
	end := func() int {
		_ = cmd.Process.Kill() // ignore error: it may have exited
		_ = cmd.Wait()         // ignore error: it was killed
		return 0
	}
	fds := []unix.PollFd{{Fd: 0, Events: unix.POLLIN}, {Fd: int32(outR.Fd()), Events: unix.POLLIN}}
	to := []int{int(inW.Fd()), 1}
	buf := make([]byte, 64<<10)
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), 0, 0, 0, 0)
		if e != 0 {
			if e == syscall.EINTR {
				continue
			}
			return end()
		}
		for i := range fds {
			if fds[i].Revents == 0 {
				continue
			}
			n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fds[i].Fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
			if e == syscall.EINTR || e == syscall.EAGAIN {
				continue
			}
			if e != 0 || n == 0 {
				return end()
			}
			for w := uintptr(0); w < n; {
				k, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(to[i]), uintptr(unsafe.Pointer(&buf[w])), n-w)
				if e == syscall.EINTR {
					continue
				}
				if e != 0 {
					return end()
				}
				w += k
			}
		}
	}
}
