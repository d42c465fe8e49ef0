package session_test

import (
	"bytes"
	"strings"
)

// A minimal txtar (golang.org/x/tools/txtar format) so tests need no extra module.

type archive struct {
	comment string
	files   []file
}

type file struct {
	name string
	data string
}

func parseTxtar(data string) archive {
	var a archive
	lines := strings.SplitAfter(data, "\n")
	cur := -1
	var b strings.Builder
	flush := func() {
		if cur < 0 {
			a.comment = b.String()
		} else {
			a.files[cur].data = b.String()
		}
		b.Reset()
	}
	for _, l := range lines {
		t := strings.TrimRight(l, "\r\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			a.files = append(a.files, file{name: strings.TrimSpace(t[3 : len(t)-3])})
			cur = len(a.files) - 1
			continue
		}
		b.WriteString(l)
	}
	flush()
	return a
}

func (a archive) get(name string) (string, bool) {
	for _, f := range a.files {
		if f.name == name {
			return f.data, true
		}
	}
	return "", false
}

func (a *archive) set(name, data string) {
	for i := range a.files {
		if a.files[i].name == name {
			a.files[i].data = data
			return
		}
	}
	a.files = append(a.files, file{name, data})
}

func (a archive) format() []byte {
	var b bytes.Buffer
	b.WriteString(a.comment)
	for _, f := range a.files {
		b.WriteString("-- " + f.name + " --\n")
		b.WriteString(f.data)
		if f.data != "" && !strings.HasSuffix(f.data, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
