package appview

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// peerIsOwnUser reports whether the other end of c, a TCP connection over IPv4 loopback, belongs
// to this process's user: the kernel lists each socket with its owner's uid in /proc/net/tcp, and
// the peer's socket is the one whose local address is c's remote address and whose remote
// address is c's local one. A socket not found (closed meanwhile) is not the user's (known, with
// err saying why); a table that cannot be read says nothing (known false).
func peerIsOwnUser(c net.Conn) (mine, known bool, err error) {
	local, ok1 := c.LocalAddr().(*net.TCPAddr)
	remote, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 || local.IP.To4() == nil || remote.IP.To4() == nil {
		return false, true, fmt.Errorf("appview: not a TCP connection over IPv4: %v", c.RemoteAddr())
	}
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		// A system that hides the table (a sandbox without /proc/net) cannot tell: taken as
		// before, rather than no view opening at all.
		return false, false, fmt.Errorf("appview: peer of %v: %w", remote, err)
	}
	// The peer's row: "sl local rem st ... uid ...", addresses as the kernel prints them.
	want, wantRem := procAddr(remote), procAddr(local)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Scan() // the header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[1] != want || f[2] != wantRem {
			continue
		}
		uid, err := strconv.Atoi(f[7])
		if err != nil {
			return false, true, fmt.Errorf("appview: peer of %v: uid %q", remote, f[7])
		}
		return uid == os.Geteuid(), true, nil
	}
	return false, true, fmt.Errorf("appview: peer of %v: no socket found", remote)
}

// procAddr is a as /proc/net/tcp prints it: the IPv4 address as a 32-bit number in the host's
// byte order, then the port, in hexadecimal ("0100007F:1F90" for 127.0.0.1:8080 on x86).
func procAddr(a *net.TCPAddr) string {
	return fmt.Sprintf("%08X:%04X", binary.NativeEndian.Uint32(a.IP.To4()), a.Port)
}
