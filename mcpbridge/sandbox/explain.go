package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// Refusals as programs print them: Node, Python, Go, C tools (cat: PATH: Permission denied).
// Compiled on the first line Explain reads, not at package init: every start of the binary
// (`switchboard serve`, each CLI command, the sandbox launcher) paid 82 KB in 408 allocations for
// them, most without ever running a sandboxed server (cmd/sbbench "first call").
var refusals = sync.OnceValue(func() *refusalREs {
	return &refusalREs{
		nodeDenied:  regexp.MustCompile(`EACCES: permission denied, (\w+) '([^']+)'`),
		pyDenied:    regexp.MustCompile(`\[Errno 13\] Permission denied: '([^']+)'`),
		goDenied:    regexp.MustCompile(`\b(open|mkdir|remove|rename|stat|lstat|readdir|chmod|symlink|link|unlinkat|openat) (/[^:]*): permission denied`),
		cDenied:     regexp.MustCompile(`(/[^:]*): Permission denied`),
		nodeMissing: regexp.MustCompile(`ENOENT: no such file or directory, (\w+) '([^']+)'`),
		pyMissing:   regexp.MustCompile(`\[Errno 2\] No such file or directory: '([^']+)'`),
		goMissing:   regexp.MustCompile(`\b(open|stat|lstat|readdir|openat|mkdir) (/[^:]*): no such file or directory`),
		cMissing:    regexp.MustCompile(`(/[^:]*): No such file or directory`),
		// A kept read-only path (Plan.Fixed) refuses with EROFS, and a mount point with EBUSY;
		// the line names the paths, a rename's two among them.
		fixedKind:     regexp.MustCompile(`(?i)\bE(?:ROFS|BUSY)\b|\[Errno (?:30|16)\]|read-only file system|device or resource busy`),
		fixedPath:     regexp.MustCompile(`'(/[^']+)'|(?:^|\s)(/[^\s:']+)`),
		connectDenied: regexp.MustCompile(`(?:dial tcp|connect) ([0-9a-fA-F.:\[\]]+:\d+)(?:: connect)?: (?:permission denied|network is unreachable)`),
	}
})

type refusalREs struct {
	nodeDenied, pyDenied, goDenied, cDenied, nodeMissing, pyMissing, goMissing, cMissing *regexp.Regexp
	fixedKind, fixedPath, connectDenied                                                  *regexp.Regexp
}

// Explain turns a line of the server's stderr that reports a refusal the sandbox caused (a
// permission error, or "no such file" for a hidden path that exists) into one
// plain sentence ("blocked: read of ~/.ssh/id_rsa (never open to a sandboxed server)"). Landlock
// tells the process only EACCES, and the host cannot read the kernel's audit log without
// privileges it should not hold, so the server's own error is where the path is named; Explain
// says false for a line that is not such a refusal, or for a path the plan allows (the refusal
// was not the sandbox's).
func (p *Plan) Explain(line string) (string, bool) {
	if s, ok := p.explainFixed(line); ok {
		return s, true
	}
	var path, op string
	missing := false
	re := refusals()
	switch {
	case re.nodeDenied.MatchString(line):
		m := re.nodeDenied.FindStringSubmatch(line)
		op, path = m[1], m[2]
	case re.pyDenied.MatchString(line):
		path = re.pyDenied.FindStringSubmatch(line)[1]
	case re.goDenied.MatchString(line):
		m := re.goDenied.FindStringSubmatch(line)
		op, path = m[1], m[2]
	case re.cDenied.MatchString(line):
		path = re.cDenied.FindStringSubmatch(line)[1]
	case re.nodeMissing.MatchString(line):
		m := re.nodeMissing.FindStringSubmatch(line)
		op, path, missing = m[1], m[2], true
	case re.pyMissing.MatchString(line):
		path, missing = re.pyMissing.FindStringSubmatch(line)[1], true
	case re.goMissing.MatchString(line):
		m := re.goMissing.FindStringSubmatch(line)
		op, path, missing = m[1], m[2], true
	case re.cMissing.MatchString(line):
		path, missing = re.cMissing.FindStringSubmatch(line)[1], true
	case re.connectDenied.MatchString(line) && p.Network.Mode != NetAll:
		addr := re.connectDenied.FindStringSubmatch(line)[1]
		return "blocked: connection to " + safetext.Line(addr) + " (" + p.networkWhy() + ")", true
	default:
		return "", false
	}
	if !filepath.IsAbs(path) {
		return "", false
	}
	path = filepath.Clean(path)
	show := p.show(path)
	if missing {
		// The launcher hides what is not granted under the home folder, /tmp and /run, so there
		// a refusal reads "no such file". It was the sandbox's if the file is there for the host
		// and no grant covers it.
		if _, err := os.Lstat(path); err != nil {
			return "", false
		}
		for _, g := range append(slices.Clone(p.Read), p.Write...) {
			if within(path, g) {
				return "", false
			}
		}
	}
	for _, d := range p.Denied {
		if within(path, d) {
			return "blocked: " + verb(op) + " " + show + " (never open to a sandboxed server)", true
		}
	}
	for _, w := range p.Write {
		if within(path, w) {
			return "", false
		}
	}
	for _, r := range p.Read {
		if within(path, r) {
			// Reads are allowed here, so a refusal is of a write (an open for writing says "open").
			return "blocked: write to " + show + " (the sandbox lets it read there, not write)", true
		}
	}
	return "blocked: " + verb(op) + " " + show + " (outside the server's sandbox)", true
}

// explainFixed explains a refusal by a path kept read-only because git, an editor or a shell
// runs code from it; a read-only file system that is not the sandbox's says false.
func (p *Plan) explainFixed(line string) (string, bool) {
	if !refusals().fixedKind.MatchString(line) {
		return "", false
	}
	for _, m := range refusals().fixedPath.FindAllStringSubmatch(line, -1) {
		path := filepath.Clean(m[1] + m[2])
		for _, f := range append(slices.Clone(p.Fixed), p.Anchors...) {
			// Inside a fixed path, or a folder holding one (moved or removed whole).
			if within(path, f) || within(f, path) {
				return "blocked: write to " + p.show(path) + " (git, an editor or a shell runs code from it outside the sandbox; list it under the entry's write to allow it)", true
			}
		}
	}
	return "", false
}

func (p *Plan) networkWhy() string {
	if p.Network.Mode == NetNone {
		return "the sandbox has no network"
	}
	return "the sandbox reaches only its network list, through its proxy"
}

func (p *Plan) show(path string) string {
	if p.Home != "" && within(path, p.Home) {
		rel, _ := filepath.Rel(p.Home, path) // ignore error: within Home
		return safetext.Line("~/" + rel)
	}
	return safetext.Line(path)
}

func writes(op string) bool {
	switch op {
	case "mkdir", "remove", "rename", "chmod", "symlink", "link", "unlinkat", "unlink", "rmdir", "write", "copyfile":
		return true
	}
	return false
}

func verb(op string) string {
	if writes(op) {
		return "write to"
	}
	if strings.HasPrefix(op, "scandir") || op == "readdir" {
		return "listing of"
	}
	return "read of"
}
