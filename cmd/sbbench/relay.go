//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// childRelay is `sbbench _relay CMD ARGS...`: it runs CMD and copies its own stdin to CMD's stdin
// and CMD's stdout to its own stdout, byte for byte, until CMD's stdout ends (when its own stdin
// ends first, CMD's stdin is closed and its output still copied). It is what one more process
// between a client and its server costs at least (a pipe hop each way and a process to wake): the
// floor under any host that runs in a process of its own, measured beside the host.
//
// One thread, four non-blocking descriptors, raw system calls as in a C relay (a runtime-aware
// ppoll doubled the relay's CPU per call: the monitor thread then wakes for every wait): it waits
// in ppoll, and reads and writes, which cannot block; a direction whose destination is full waits
// for POLLOUT with its bytes kept. The runtime cannot stop a thread inside a raw ppoll, so the
// collector is off (nothing in the loop allocates) and nothing else here stops the world; the
// monitor's preemption signal every 10 ms ends the ppoll with EINTR, and the loop polls again.
func childRelay(args []string) int {
	if len(args) == 0 {
		return 2
	}
	runtime.LockOSThread()
	debug.SetGCPercent(-1)
	cmd, inW, outR, err := startPiped(args)
	if err != nil {
		return 1
	}
	defer runtime.KeepAlive(inW) // their descriptors are used raw below: no finalizer may close them
	defer runtime.KeepAlive(outR)
	type direction struct {
		src, dst int
		buf      []byte
		from, to int // pending bytes: buf[from:to]
		eof      bool
	}
	dirs := [2]*direction{
		{src: 0, dst: int(inW.Fd()), buf: make([]byte, 64<<10)},
		{src: int(outR.Fd()), dst: 1, buf: make([]byte, 64<<10)},
	}
	for _, fd := range []int{0, 1} { // shared with the parent: put back as found
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && fl&unix.O_NONBLOCK == 0 {
			defer unix.SetNonblock(fd, false) // ignore error: best effort, at exit
		}
	}
	for _, fd := range []int{0, 1, dirs[0].dst, dirs[1].src} {
		if err := unix.SetNonblock(fd, true); err != nil {
			_ = cmd.Process.Kill() // ignore error: it may have exited
			_ = cmd.Wait()         // ignore error: it was killed
			return 1
		}
	}
	var fds [2]unix.PollFd
	for {
		for i, d := range dirs {
			fds[i] = unix.PollFd{Fd: -1}
			switch {
			case d.from < d.to:
				fds[i] = unix.PollFd{Fd: int32(d.dst), Events: unix.POLLOUT}
			case !d.eof:
				fds[i] = unix.PollFd{Fd: int32(d.src), Events: unix.POLLIN}
			}
		}
		if fds[1].Fd == -1 { // the child's output ended and is all written
			_ = cmd.Process.Kill() // ignore error: it may have exited
			break
		}
		_, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), 0, 0, 0, 0)
		if e != 0 && e != syscall.EINTR {
			_ = cmd.Process.Kill() // ignore error: it may have exited
			break
		}
		for i, d := range dirs {
			if fds[i].Revents == 0 {
				continue
			}
			if d.from == d.to {
				n, e := rawIO(unix.SYS_READ, d.src, d.buf)
				switch {
				case e == syscall.EAGAIN || e == syscall.EINTR:
					continue
				case e != 0 || n == 0:
					d.eof = true
					if i == 0 {
						inW.Close() // the child sees the end of its input
					}
					continue
				}
				d.from, d.to = 0, n
			}
			for d.from < d.to { // write at once: the destination usually has room
				n, e := rawIO(unix.SYS_WRITE, d.dst, d.buf[d.from:d.to])
				if e == syscall.EINTR {
					continue
				}
				if e == syscall.EAGAIN {
					break
				}
				if e != 0 {
					_ = cmd.Process.Kill() // ignore error: it may have exited
					return 1
				}
				d.from += n
			}
		}
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); errors.As(err, &exit) && exit.ExitCode() > 0 {
		return exit.ExitCode()
	}
	return 0
}

// startPiped starts args as a child with pipes on its stdin and stdout (its stderr is ours), and
// returns them: in, what the child reads, and out, what it writes.
func startPiped(args []string) (cmd *exec.Cmd, in, out *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, err
	}
	cmd = exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	err = cmd.Start()
	inR.Close() // the child's ends: its own copies stay open
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, nil, err
	}
	return cmd, inW, outR, nil
}

// rawIO is one read(2) or write(2) of b on a non-blocking descriptor, not announced to the
// runtime (it cannot block).
func rawIO(trap uintptr, fd int, b []byte) (int, syscall.Errno) {
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}
