// Package lsptest is the one LSP test client: the editor end of a Content-Length framed JSON-RPC
// 2.0 stream, written from the LSP specification with the standard library only, so that it checks
// the host's framer instead of sharing it. Host tests (hosttest, the fuzz targets), the fault suite
// and the end-to-end test of cmd/switchboard, and the benchmark (cmd/sbbench) all speak LSP
// through it.
//
// It writes frames (and raw bytes, for malformed-input tests), reads frames strictly and with a
// size bound, sends requests and notifications, answers the server's requests, and records what
// the server sends so a test can wait for it.
//
// It imports only the standard library: never go.lsp.dev, host/internal/lspconn or any
// switchboard package (deps_test.go guards it).
package lsptest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DefaultMaxFrame bounds the body of one frame read when Options.MaxFrame is zero.
const DefaultMaxFrame = 256 << 20

// Frame returns body framed with a Content-Length header.
func Frame(body []byte) []byte {
	b := make([]byte, 0, len(body)+32)
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}

// WriteFrame writes body to w as one frame, in one Write call.
func WriteFrame(w io.Writer, body []byte) error {
	_, err := w.Write(Frame(body))
	return err
}

// ReadFrame reads one frame the way the host must write it: header lines ending in CRLF, each
// "Name: value", a decimal Content-Length no larger than max (DefaultMaxFrame when max <= 0), an
// empty line, then the body. It returns io.EOF only at a clean end between frames.
func ReadFrame(r *bufio.Reader, max int) ([]byte, error) {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	length := -1
	for first := true; ; first = false {
		line, err := r.ReadString('\n')
		if err != nil {
			if first && line == "" && errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("lsptest: header: %w (got %q)", err, line)
		}
		if !strings.HasSuffix(line, "\r\n") {
			return nil, fmt.Errorf("lsptest: header line %q does not end in CRLF", line)
		}
		line = strings.TrimSuffix(line, "\r\n")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("lsptest: header line %q has no colon", line)
		}
		if strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("lsptest: bad Content-Length %q", v)
			}
			if n > max {
				return nil, fmt.Errorf("lsptest: Content-Length %d is over the bound %d", n, max)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("lsptest: frame without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("lsptest: body: %w", err)
	}
	return body, nil
}
