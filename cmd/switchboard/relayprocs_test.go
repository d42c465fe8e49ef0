package main

import (
	"runtime"
	"testing"
)

// Once its servers have started, serve gives the host one P, unless the user chose GOMAXPROCS.
func TestRelayProcs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("one P is for Linux only")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct {
		env  string
		want int
	}{{"", 1}, {"2", 2}} {
		runtime.GOMAXPROCS(2)
		relayProcs(func(k string) string {
			if k == "GOMAXPROCS" {
				return tc.env
			}
			return ""
		})
		if got := runtime.GOMAXPROCS(0); got != tc.want {
			t.Errorf("GOMAXPROCS=%q: %d Ps after the start, want %d", tc.env, got, tc.want)
		}
	}
}
