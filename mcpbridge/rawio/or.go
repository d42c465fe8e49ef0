package rawio

import (
	"io"
	"net"
	"os"
	"time"
)

// Conn is what a File and an os.File both are.
type Conn interface {
	io.ReadWriteCloser
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// Or is f read and written with raw system calls when New takes it, else f itself.
func Or(f *os.File) Conn {
	if r, ok := New(f); ok {
		return r
	}
	return f
}

// OrConn is c read and written with raw system calls when NewConn takes it, else c itself.
func OrConn(c *net.UnixConn) Conn {
	if r, ok := NewConn(c); ok {
		return r
	}
	return c
}
