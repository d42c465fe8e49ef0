//go:build !linux

package main

import (
	"fmt"
	"os"
)

// childRelay (relay.go) polls raw descriptors: Linux only. Elsewhere the relay rows fail, saying so.
func childRelay([]string) int {
	fmt.Fprintln(os.Stderr, "sbbench _relay: Linux only")
	return 2
}

// childTranslator (translator.go) is built as the relay is: Linux only.
func childTranslator([]string) int {
	fmt.Fprintln(os.Stderr, "sbbench _translate: Linux only")
	return 2
}
