package appview

import (
	"errors"
	"log/slog"
	"net"
)

// ownUser accepts only connections made by this process's own OS user: any user of the machine
// can connect to 127.0.0.1, and the page's one-time address is on the command line the editor
// opened the browser with, which every user can list. Where the peer's user cannot be known
// (peerIsOwnUser's ok false: not Linux), connections are taken as before.
type ownUser struct {
	net.Listener
	log *slog.Logger
}

func (l ownUser) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		mine, known, err := peerIsOwnUser(c)
		if !known && err != nil {
			l.log.Debug("appview: cannot tell whose a connection is", "error", err)
		}
		if !known || mine {
			return c, nil
		}
		if err == nil {
			err = errors.New("the socket is another user's")
		}
		// Refused without a byte: another user's process, or one that went before it was known.
		l.log.Debug("appview: refused a connection of another user", "peer", c.RemoteAddr().String(), "error", err)
		c.Close() // ignore error: refusing
	}
}
