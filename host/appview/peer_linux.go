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
// to this process's user: the kernel lists each socket with its owner's uid in /proc/net/tcp (or tcp6), and
// the peer's socket is the one whose local address is c's remote address and whose remote
// address is c's local one. A socket not found (closed meanwhile) is not the user's (known, with
// err saying why); a table that cannot be read says nothing (known false).
func peerIsOwnUser(c net.Conn) (mine, known bool, err error) {
	local, ok1 := c.LocalAddr().(*net.TCPAddr)
	remote, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 || local.IP.To4() == nil || remote.IP.To4() == nil {
		return false, true, fmt.Errorf("appview: not a TCP connection over IPv4: %v", c.RemoteAddr())
	}
	// The peer's socket is in /proc/net/tcp, or in /proc/net/tcp6 as ::ffff:127.0.0.1 when it is
	// an IPv6 socket that reached the IPv4 address (Firefox's, on Linux). A table read in pieces
	// can miss a row that moved while it was read: one more reading before the peer is refused.
	var readErr error
	for range 2 {
		for _, t := range []struct{ file, want, wantRem string }{
			{"/proc/net/tcp", procAddr(remote), procAddr(local)},
			{"/proc/net/tcp6", procAddr6(remote), procAddr6(local)},
		} {
			data, err := os.ReadFile(t.file)
			if err != nil {
				readErr = err
				continue
			}
			if uid, found, err := procUID(data, t.want, t.wantRem); err != nil {
				return false, true, fmt.Errorf("appview: peer of %v: %w", remote, err)
			} else if found {
				return uid == os.Geteuid(), true, nil
			}
		}
		if readErr != nil {
			// A system that hides the table (a sandbox without /proc/net) cannot tell: taken as
			// before, rather than no view opening at all.
			return false, false, fmt.Errorf("appview: peer of %v: %w", remote, readErr)
		}
	}
	return false, true, fmt.Errorf("appview: peer of %v: no socket found", remote)
}

// procUID finds the row "sl local rem st ... uid ..." with addresses want and wantRem as the
// kernel prints them, and returns its uid.
func procUID(data []byte, want, wantRem string) (uid int, found bool, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Scan() // the header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[1] != want || f[2] != wantRem {
			continue
		}
		uid, err := strconv.Atoi(f[7])
		if err != nil {
			return 0, false, fmt.Errorf("uid %q", f[7])
		}
		return uid, true, nil
	}
	return 0, false, nil
}

// procAddr6 is an IPv4 address a as /proc/net/tcp6 prints it mapped into IPv6 (::ffff:a.b.c.d):
// four 32-bit words, each in the host's byte order, then the port.
func procAddr6(a *net.TCPAddr) string {
	ip := a.IP.To16()
	var b strings.Builder
	for i := 0; i < 16; i += 4 {
		fmt.Fprintf(&b, "%08X", binary.NativeEndian.Uint32(ip[i:i+4]))
	}
	return fmt.Sprintf("%s:%04X", b.String(), a.Port)
}

// procAddr is a as /proc/net/tcp prints it: the IPv4 address as a 32-bit number in the host's
// byte order, then the port, in hexadecimal ("0100007F:1F90" for 127.0.0.1:8080 on x86).
func procAddr(a *net.TCPAddr) string {
	return fmt.Sprintf("%08X:%04X", binary.NativeEndian.Uint32(a.IP.To4()), a.Port)
}
