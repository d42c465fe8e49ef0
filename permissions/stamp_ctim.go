//go:build linux || openbsd || dragonfly || solaris || illumos

package permissions

import (
	"syscall"
	"time"
)

func changeTime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctim.Unix()) }
