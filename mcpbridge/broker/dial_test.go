//go:build unix

package broker

import "net"

type netDialer struct{}

func (netDialer) dial(sock string) (net.Conn, error) { return net.Dial("unix", sock) }
