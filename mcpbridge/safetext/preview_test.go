package safetext

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestArgumentsNamesEveryKey (F6): with a long first value, each of 12 keys is named; with 45
// keys, the first ArgKeysListed are named and the rest counted exactly; a long key says it was
// cut. The preview stays one line.
func TestArgumentsNamesEveryKey(t *testing.T) {
	obj := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"first":"` + strings.Repeat("x", 300) + `"`)
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, `,"key%02d":"%s"`, i, strings.Repeat("y", 60))
		}
		b.WriteString("}")
		return []byte(b.String())
	}
	got := Arguments(obj(12), 200, "see all")
	for i := 1; i < 12; i++ {
		if k := fmt.Sprintf("key%02d", i); !strings.Contains(got, k) {
			t.Errorf("12 keys: %s not named in %q", k, got)
		}
	}
	got = Arguments(obj(45), 200, "see all")
	named := 0
	for i := 1; i < 45; i++ {
		if strings.Contains(got, fmt.Sprintf("key%02d", i)) {
			named++
		}
	}
	m := regexp.MustCompile(`and (\d+) more keys not named here; see all\)$`).FindStringSubmatch(got)
	if m == nil || named < ArgKeysListed {
		t.Fatalf("45 keys: %d named, no exact count of the rest: %q", named, got)
	}
	if n, _ := strconv.Atoi(m[1]); named+n != 44 {
		t.Errorf("45 keys: %d named + %d counted != 44: %q", named, n, got)
	}
	if strings.Contains(got, "\n") {
		t.Errorf("preview is not one line: %q", got)
	}
	long := strings.Repeat("k", 100)
	got = Arguments([]byte(`{"a":"`+strings.Repeat("x", 300)+`","`+long+`":1}`), 50, "see all")
	if !strings.Contains(got, "(+") || !strings.Contains(got, "more characters)") || strings.Contains(got, long) {
		t.Errorf("cut key does not say it was cut: %q", got)
	}
}
