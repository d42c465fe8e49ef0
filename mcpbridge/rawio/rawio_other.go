//go:build !linux

package rawio

import (
	"net"
	"os"
	"time"
)

// File is not used outside Linux: New always reports false, and callers keep os.File.
type File struct{}

// New reports false: raw system calls are only used on Linux.
func New(*os.File) (*File, bool) { return nil, false }

// NewConn reports false: raw system calls are only used on Linux.
func NewConn(*net.UnixConn) (*File, bool) { return nil, false }

func (*File) TryWrite([]byte) int { return 0 }

func (*File) Read([]byte) (int, error)         { return 0, os.ErrInvalid }
func (*File) Write([]byte) (int, error)        { return 0, os.ErrInvalid }
func (*File) SetReadDeadline(time.Time) error  { return os.ErrInvalid }
func (*File) SetWriteDeadline(time.Time) error { return os.ErrInvalid }
func (*File) Close() error                     { return os.ErrInvalid }
