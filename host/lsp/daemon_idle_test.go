package lsp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestDaemonIdleSeconds: the setting reaches the application; a value out of range is refused
// with a warning (then the default applies), never clamped silently.
func TestDaemonIdleSeconds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		set  bool
		warn string
	}{
		{`{"daemonIdleSeconds": 5}`, 5 * time.Second, true, ""},
		{`{"daemonIdleSeconds": 0}`, 0, true, ""},
		{`{}`, 0, false, ""},
		{`{"daemonIdleSeconds": -1}`, 0, false, "daemonIdleSeconds must be between 0 and 86400"},
		{`{"daemonIdleSeconds": 1e9}`, 0, false, "daemonIdleSeconds must be between 0 and 86400"},
	} {
		o, warns := parseInitOptions(json.RawMessage(tc.in))
		st := settings(o)
		if st.DaemonIdle != tc.want || st.DaemonIdleSet != tc.set {
			t.Errorf("%s: DaemonIdle %v set %v, want %v %v", tc.in, st.DaemonIdle, st.DaemonIdleSet, tc.want, tc.set)
		}
		if got := strings.Join(warns, "\n"); tc.warn == "" && got != "" || !strings.Contains(got, tc.warn) {
			t.Errorf("%s: warnings %q, want %q", tc.in, got, tc.warn)
		}
	}
}
