package appview

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// getEnv6 makes the test binary, run as another user, fetch that address through an IPv6 socket
// (dialMapped) and print the status.
const getEnv6 = "APPVIEW_TEST_GET6"

func init() {
	u := os.Getenv(getEnv6)
	if u == "" {
		return
	}
	tr := &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) { return dialMapped(addr) }}
	res, err := (&http.Client{Transport: tr}).Get(u)
	if err != nil {
		fmt.Println("refused:", err)
		os.Exit(0)
	}
	body, _ := io.ReadAll(res.Body)
	fmt.Println("status", res.StatusCode, len(body))
	os.Exit(0)
}

// TestOwnUserOverIPv6SocketServed: the person's own browser may reach 127.0.0.1 through an IPv6
// socket (Firefox does); its socket is in /proc/net/tcp6, and the view must still open.
func TestOwnUserOverIPv6SocketServed(t *testing.T) {
	if fd, err := syscall.Socket(syscall.AF_INET6, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0); err != nil {
		t.Skipf("no IPv6 sockets here: %v", err)
	} else {
		syscall.Close(fd)
	}
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

// TestOtherUserRefused: another user of the machine can connect to 127.0.0.1 too, and read the
// page's one-time address from the command line the editor opened the browser with (xdg-open's,
// the browser's: any user can list them). Loading it first, it would take the view's tool input
// and result and the relay's secret (the view's calls, its context for the model), and the
// person's browser would get "already used". The server answers only connections of its own user.
func TestOtherUserRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	s, _ := newTestServer(t, Options{})
	u := open(t, s)

	dir, err := os.MkdirTemp("", "appview-other-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "appview.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	// Over an IPv4 socket, and over an IPv6 one to ::ffff:127.0.0.1 (listed in /proc/net/tcp6).
	for _, env := range []string{getEnv, getEnv6} {
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Env = []string{env + "=" + u}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("as another user (%s): %v (%s)", env, err, out)
		}
		if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, "refused") {
			t.Errorf("another user's request (%s): %q, want the connection refused", env, got)
		}
	}
	// The person's own browser (this user) still gets the page: the token was not taken.
	loadPage(t, u)
}
