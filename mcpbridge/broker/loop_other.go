//go:build !linux

package broker

import "errors"

// Elsewhere the relay reads on goroutines (loop_linux.go says why Linux does not).

const loopSupported = false

type reader struct{}

type relayLoop struct{}

func loop() *relayLoop { return nil }

func (*relayLoop) add(int, func([]byte), func(error)) (*reader, error) { return nil, errNoLoop }

func (*relayLoop) drop(*reader) {}

var errNoLoop = errors.New("broker: no relay loop on this system")

func rawPipe(bool) (r, w int, err error) { return -1, -1, errNoLoop }
