//go:build !linux && !darwin

package broker

import (
	"errors"
	"net"
)

// peerCred cannot ask the peer's credentials here, and an unchecked peer counts as a stranger:
// there is no daemon on this system and shared servers run in the window.
func peerCred(c *net.UnixConn) (uid, pid int, err error) {
	return -1, 0, errors.New("peer credentials are not available on this system")
}
