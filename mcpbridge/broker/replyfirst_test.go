//go:build unix

package broker

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/rawio"
)

// TestHelloReplyComesFirst: a window whose frames go on the hello's socket (no pipes: the daemon
// could not make them, or a window of an older build) reads its hello's reply first, then frames.
// The attachment is in its instance before the reply is written, and another window attaching or
// leaving meanwhile (switchboard/windowsChanged), or the server's broadcast, sends it a frame then:
// written at once, it came before the reply, which the window read as a reply of protocol 0 and
// failed to attach.
func TestHelloReplyComesFirst(t *testing.T) {
	fds, err := streamPair()
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fds[0]), "daemon")
	fc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	win := os.NewFile(uintptr(fds[1]), "window")
	defer win.Close()
	conn := fc.(*net.UnixConn)
	in := newInstance(&daemon{}, "k", request(launch()))
	a := newAttachment(in, conn, rawio.OrConn(conn), nil, -1)
	defer a.kill()

	// in.attach has returned; the reply is not written yet.
	a.send([]byte(`{"jsonrpc":"2.0","method":"switchboard/windowsChanged","params":{"windows":2,"seq":1}}`))
	if err := writeReply(conn, helloReply{Broker: Major, Instance: "k"}); err != nil {
		t.Fatal(err)
	}
	go a.writeLoop()

	_ = win.SetReadDeadline(time.Now().Add(30 * time.Second)) // a hang fails, not a wait
	r := bufio.NewReader(win)
	first, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var reply helloReply
	if err := json.Unmarshal([]byte(first), &reply); err != nil || reply.Broker != Major {
		t.Errorf("the window read %q first, then %q: want its hello's reply first", first, second)
	}
}
