package host

import (
	"strings"
	"testing"
)

// The site a question names first is what the person checks: a look-alike name (Cyrillic і in
// "gіthub.com") is shown percent-encoded and said not to be plain ASCII; a user name before the
// host is refused.
func TestShownURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://example.com/x":                         "a page on https://example.com (https://example.com/x)",
		"https://g\u0456thub.com/login/oauth/authorize": "a page on https://g%D1%96thub.com, whose name has letters that are not plain ASCII",
		"https://\u0430ccounts.google.com/":             "a page on https://%D0%B0ccounts.google.com, whose name",
	} {
		u, err := ElicitURL(raw)
		if err != nil {
			t.Fatalf("ElicitURL(%q): %v", raw, err)
		}
		if got := ShownURL(u); !strings.HasPrefix(got, want) {
			t.Errorf("ShownURL(%q) = %q, want it to start %q", raw, got, want)
		}
	}
	for _, raw := range []string{"https://github.com@evil.example/", "https://a:b@evil.example/", "file:///etc/passwd", "https:///x"} {
		if _, err := ElicitURL(raw); err == nil {
			t.Errorf("ElicitURL(%q) accepted", raw)
		}
	}
}
