//go:build linux && race

package rawio

import "sync/atomic"

// ioSync stands for the kernel between a write and the read that sees its bytes, for the race
// detector: syscall.Write and syscall.Read annotate every call this way (internal/race's
// ReleaseMerge and Acquire on one variable), and the raw calls here must too, or a program
// whose goroutines hand data over through a pipe (a request out to a server, its answer back)
// reads as racy. Two differences remain: an atomic Add also orders the writers among themselves
// (ReleaseMerge does not), and the bytes the kernel reads from or writes into the buffer are not
// annotated (syscall's WriteRange and ReadRange), so a race on the buffer itself goes unseen.
var ioSync atomic.Uint64

func released() { ioSync.Add(1) }
func acquired() { ioSync.Load() }
