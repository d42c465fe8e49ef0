package appview

import (
	"context"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
)

// dialMapped connects to addr (127.0.0.1:port) the way Firefox does on Linux (NSPR): an AF_INET6
// socket, not IPv6-only, to the IPv4-mapped address ::ffff:127.0.0.1. The kernel lists such a
// socket in /proc/net/tcp6, not /proc/net/tcp.
func dialMapped(addr string) (net.Conn, error) {
	a, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Socket(syscall.AF_INET6, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 0); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	sa := &syscall.SockaddrInet6{Port: a.Port}
	copy(sa.Addr[:], a.IP.To16()) // ::ffff:127.0.0.1
	if err := syscall.Connect(fd, sa); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "mapped")
	defer f.Close()
	return net.FileConn(f)
}

// TestOwnUserOverIPv6SocketServed: the person's own browser may reach 127.0.0.1 through an IPv6
// socket (Firefox does); its socket is in /proc/net/tcp6, and the view must still open.
func TestOwnUserOverIPv6SocketServed(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	u := open(t, s)
	tr := &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) { return dialMapped(addr) }}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Get(u)
	if err != nil {
		t.Fatalf("own user's page over an IPv6 socket: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("own user's page over an IPv6 socket: status %d", res.StatusCode)
	}
}
