package policy

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A deny by serverCommand names a program run a certain way. The same run can be spelled in other
// ways that Claude Code's exact comparison misses; a deny matches each of them (an allow still
// matches only what it names). unwrapped gives the launches a wrapper starts, runnerArgs the
// arguments of a package runner as it understands them.

// maxUnwrap bounds how many wrappers deep a launch is looked into (env sh -c "env npx ...").
// Deeper than any real launch: a chain that goes on past it is a dodge (nohup nohup ... npx),
// and matches every deny by command (unwrapped's cut).
const maxUnwrap = 32

// unwrapped returns l and each launch that l starts through a wrapper: env (its options and
// NAME=VALUE assignments), sh/bash/dash/zsh -c with a script of plain words (exec and
// assignments in front allowed), npm exec (as npx), and nice, nohup, setsid, ionice, stdbuf,
// timeout, taskset and chrt. A script with quotes, variables or operators is not taken
// apart: what it runs cannot be told without running a shell. cut is true when the last
// launch is a wrapper still, maxUnwrap deep: what it starts was not looked at.
//
// The program a wrapper starts is found as lookPath finds it ("" when it cannot be).
func unwrapped(l Launch, lookPath func(string) (string, error)) (out []Launch, cut bool) {
	out = []Launch{l}
	for range maxUnwrap {
		cmd, args, ok := unwrapOnce(out[len(out)-1])
		if !ok {
			return out, false
		}
		n := l
		n.Command, n.Args, n.Path = cmd, args, ""
		if strings.ContainsRune(cmd, '/') {
			n.Path = cmd
		} else if found, err := lookPath(cmd); err == nil {
			n.Path = found
		}
		out = append(out, n)
	}
	_, _, more := unwrapOnce(out[len(out)-1])
	return out, more
}

func unwrapOnce(l Launch) (string, []string, bool) {
	for _, name := range programNames(l) {
		switch name {
		case "env":
			return afterEnv(l.Args)
		case "sh", "bash", "dash", "zsh", "ksh", "ash":
			return afterShell(l.Args)
		case "npm":
			// npm exec (npm x) is npx, once npm's parser has taken out its first "--", wherever
			// it is (npm exec pkg -- args).
			if k := npmExec(l.Args); k >= 0 {
				args := slices.Clone(l.Args[k+1:])
				if i := slices.Index(args, "--"); i >= 0 {
					args = slices.Delete(args, i, i+1)
				}
				return "npx", args, true
			}
		default:
			if w, ok := wrappers[name]; ok {
				return afterWrapper(w, l.Args)
			}
		}
	}
	return "", nil, false
}

// npmExec is the index of npm's exec command in args, or -1. npm reads its options anywhere, so
// some may come before the command (npm -y exec, npm --loglevel silent exec), and it takes a
// command's unambiguous prefix for the command (npm exe). Which options take a value is npm's
// long list: a word after an option may be its value, or the command.
func npmExec(args []string) int {
	valueNext := false
	for k, a := range args {
		switch {
		case a == "--":
			return -1
		case a == "exec" || a == "exe" || a == "x":
			return k
		case strings.HasPrefix(a, "-") && a != "-":
			valueNext = !strings.Contains(a, "=")
		case valueNext:
			valueNext = false // the option's value, or npm's other command (which is not exec)
		default:
			return -1 // another command
		}
	}
	return -1
}

// wrappers are programs that run the command after their options unchanged (nice, nohup,
// timeout, ...): how each takes its options (the real program's getopt_long spec: GNU coreutils
// 9, util-linux 2.38 and later), and what it takes between them and the command.
var wrappers = map[string]wrapper{
	"nohup":  {opts: optSpec{long: []string{"help", "version"}}},
	"setsid": {opts: optSpec{short: "cfwhV", long: []string{"ctty", "fork", "wait", "help", "version"}}},
	// nice also takes -N (and --N, -+N) as -n N, anywhere among its options.
	"nice":    {opts: optSpec{short: "n:", long: []string{"adjustment=", "help", "version"}, number: true}},
	"ionice":  {opts: optSpec{short: "c:n:p:P:u:thV", long: []string{"class=", "classdata=", "pid=", "pgid=", "uid=", "ignore", "help", "version"}}},
	"stdbuf":  {opts: optSpec{short: "i:o:e:", long: []string{"input=", "output=", "error=", "help", "version"}}},
	"timeout": {opts: optSpec{short: "k:s:v", long: []string{"kill-after=", "signal=", "foreground", "preserve-status", "verbose", "help", "version"}}, operand: operandAlways},
	"taskset": {opts: optSpec{short: "acphV", long: []string{"all-tasks", "cpu-list", "pid", "help", "version"}}, operand: operandAlways},
	"chrt": {opts: optSpec{short: "abdD:efhimopP:RrT:vV", long: []string{"all-tasks", "batch", "deadline", "ext", "fifo", "help", "idle", "max",
		"other", "pid", "reset-on-fork", "rr", "sched-deadline=", "sched-period=", "sched-runtime=", "verbose", "version"}}, operand: operandNumber},
}

type wrapper struct {
	opts    optSpec
	operand int // what comes before the command: operandNone, operandAlways, operandNumber
}

const (
	operandNone   = iota
	operandAlways // timeout's duration, taskset's mask or CPU list
	// chrt's priority: newer util-linux lets a policy without one (--other) leave it out, so a
	// word that is not a number is the command.
	operandNumber
)

// afterWrapper skips a wrapper's options (and their values) and what it takes before the
// command, and returns the command.
func afterWrapper(w wrapper, args []string) (string, []string, bool) {
	i, ok := w.opts.parse(args, nil)
	if !ok {
		return "", nil, false
	}
	switch {
	case w.operand == operandAlways:
		i++
	case w.operand == operandNumber && i < len(args):
		if _, err := strconv.Atoi(strings.TrimPrefix(args[i], "+")); err == nil {
			i++
		}
	}
	if i >= len(args) {
		return "", nil, false
	}
	return args[i], args[i+1:], true
}

// optSpec is how a program takes its options, as getopt_long reads them with a "+" optstring
// (GNU coreutils and util-linux all do): the options end at the first word that is not one, or
// after "--"; short options may be written together, one that takes a value taking the rest of
// the word or else the next word; a long option may be cut to any prefix that names only it,
// and takes its value after "=" or else in the next word (an optional value only after "=").
// What the program would refuse (an unknown option) does not run anything: how such a word is
// read does not matter.
type optSpec struct {
	short string // getopt's letters; ':' after one that takes a value
	// long are the long options' names: "name" takes no value, "name=" takes one, "name?" an
	// optional one.
	long   []string
	number bool // -N, --N and -+N are options (nice's old spelling of -n N)
}

// parse reads args' options and returns the index of the first word after them. each, when
// set, is given each option (a short one's letter, a long one's full name) and its value; when
// it returns true parse stops there and returns the index after that option. ok is false when
// an option's value is missing (the program runs nothing).
func (s optSpec) parse(args []string, each func(name, value string) (stop bool)) (next int, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return i + 1, true
		case len(a) < 2 || a[0] != '-':
			return i, true
		case s.number && isNumberOption(a):
			if each != nil && each("n", strings.TrimLeft(a, "-+")) {
				return i + 1, true
			}
		case a[1] == '-':
			name, value, eq := strings.Cut(a[2:], "=")
			name, takes := s.longOpt(name)
			if takes == '=' && !eq {
				if i+1 >= len(args) {
					return len(args), false
				}
				i++
				value = args[i]
			}
			if each != nil && each(name, value) {
				return i + 1, true
			}
		default:
			for j := 1; j < len(a); j++ {
				k := strings.IndexByte(s.short, a[j])
				if k < 0 || a[j] == ':' || k+1 >= len(s.short) || s.short[k+1] != ':' {
					if each != nil && each(a[j:j+1], "") {
						return i + 1, true
					}
					continue
				}
				value := a[j+1:]
				if value == "" {
					if i+1 >= len(args) {
						return len(args), false
					}
					i++
					value = args[i]
				}
				if each != nil && each(a[j:j+1], value) {
					return i + 1, true
				}
				break
			}
		}
	}
	return len(args), true
}

// longOpt is the long option that name names (itself, or the only one it is a prefix of) and
// what it takes: 0 no value, '=' a value, '?' an optional one. An unknown or ambiguous name is
// returned as it is, taking no value (the program refuses it).
func (s optSpec) longOpt(name string) (string, byte) {
	found, takes, n := name, byte(0), 0
	for _, l := range s.long {
		full, t := l, byte(0)
		if c := l[len(l)-1]; c == '=' || c == '?' {
			full, t = l[:len(l)-1], c
		}
		if full == name {
			return full, t
		}
		if strings.HasPrefix(full, name) {
			found, takes, n = full, t, n+1
		}
	}
	if n != 1 {
		return name, 0
	}
	return found, takes
}

// isNumberOption reports whether a is nice's -N, --N or -+N.
func isNumberOption(a string) bool {
	d := 1
	if a[1] == '-' || a[1] == '+' {
		d = 2
	}
	return d < len(a) && a[d] >= '0' && a[d] <= '9'
}

// programNames are the base names of what l runs: as written, as found, and where a symlink
// leads (a link named "innocent" to env is env).
func programNames(l Launch) []string {
	names := []string{filepath.Base(l.Command)}
	if l.Path != "" {
		names = append(names, filepath.Base(l.Path))
		if real, err := filepath.EvalSymlinks(l.Path); err == nil {
			names = append(names, filepath.Base(real))
		}
	}
	return names
}

// envOpts are GNU env's options (coreutils 9; -a/--argv0 is 9.5's).
var envOpts = optSpec{short: "a:C:iS:u:v0", long: []string{"argv0=", "block-signal?", "chdir=", "debug", "default-signal?", "help",
	"ignore-environment", "ignore-signal?", "list-signal-handling", "null", "split-string=", "unset=", "version"}}

// afterEnv skips env's options and assignments and returns the command it runs. -S's string
// is split into words that env reads on from (options, assignments, the command).
func afterEnv(args []string) (string, []string, bool) {
	var split []string
	splitSeen := false
	i, ok := envOpts.parse(args, func(name, value string) bool {
		if name == "S" || name == "split-string" {
			var plain bool
			if split, plain = scriptWords(value); !plain {
				// An escape or ${VAR} (env expands it): its words as they look, which for a
				// deny is as good a guess as any (the command is most often plain).
				split = strings.Fields(value)
			}
			splitSeen = true
			return true
		}
		return false
	})
	switch {
	case !ok:
		return "", nil, false
	case splitSeen:
		return afterEnv(append(split, args[i:]...))
	}
	if i < len(args) && args[i] == "-" {
		i++ // a lone "-" is -i
	}
	for ; i < len(args); i++ {
		if !strings.Contains(args[i], "=") {
			return args[i], args[i+1:], true
		}
	}
	return "", nil, false
}

// afterShell takes apart "-c SCRIPT" (or -lc, -ec, ..., after -o NAME or +e, or bash's
// --rcfile FILE) when SCRIPT is plain words. The script is the first word after all the
// options, which may follow -c too (sh -c -e SCRIPT).
func afterShell(args []string) (string, []string, bool) {
	sawC := false
	i := 0
options:
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i++
			break options
		case a == "--rcfile" || a == "--init-file":
			i++ // bash's rc file
		case strings.HasPrefix(a, "--"):
			// --login, --norc, ...
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			// -e, -lc, +e: letters together, each o or O taking the next word (set -o's option
			// name: -co pipefail, +o errexit).
			sawC = sawC || a[0] == '-' && strings.ContainsRune(a, 'c')
			i += strings.Count(a, "o") + strings.Count(a, "O")
		default:
			break options
		}
	}
	if !sawC || i >= len(args) {
		return "", nil, false // a script file, or stdin
	}
	words, ok := scriptWords(args[i])
	if !ok {
		return "", nil, false
	}
	for len(words) > 0 && (words[0] == "exec" || strings.Contains(words[0], "=")) {
		words = words[1:]
	}
	if len(words) == 0 {
		return "", nil, false
	}
	return words[0], words[1:], true
}

// scriptWords splits a script of words as sh (and env -S) does: plain characters, and any
// text in '...' or "..." other than $, ` and \, which expand or escape (a quoted part joins the
// word it touches: np'x' is npx; a pair of quotes alone is an empty word). ok is false for anything else
// (expansions, escapes, operators, globs, comments): what such a script runs cannot be told
// without running the shell.
func scriptWords(script string) (words []string, ok bool) {
	var w strings.Builder
	inWord := false
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(script[i+1:], c)
			if end < 0 {
				return nil, false
			}
			quoted := script[i+1 : i+1+end]
			if strings.ContainsAny(quoted, "$`\\") {
				return nil, false
			}
			w.WriteString(quoted)
			inWord = true
			i += end + 1
		case plainWordRune(rune(c)):
			w.WriteByte(c)
			inWord = true
		default:
			return nil, false
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, true
}

func plainWordRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("@/._:=+-,% \t", r)
}

// runnerRead is one way a package runner may read its arguments: its options before the
// package, and the package (without its version unless kept) with what follows it. pkgs are the
// packages its options install beside that (npx -p P, npx --package=P, uvx --from P, uvx --with
// P; without their versions unless kept): the command then runs with their code, and installing
// them runs their install scripts.
type runnerRead struct {
	opts, run, pkgs []string
}

// packageOption reports whether a is an option of program that names a package to install, and
// its value when it is written in the same word (--package=P).
func packageOption(program, a string) (value string, inline, ok bool) {
	names := []string{"-p", "--package"} // npx, pnpx (pnpm dlx), bunx
	if strings.EqualFold(program, "uvx") {
		names = []string{"--from", "--with"}
	}
	for _, n := range names {
		if a == n {
			return "", false, true
		}
		if v, found := strings.CutPrefix(a, n+"="); found && strings.HasPrefix(n, "--") {
			return v, true, true
		}
	}
	return "", false, false
}

// runnerReads are the ways a package runner may read args, with what does not change the
// package it runs taken out: npx's -y/--yes (without a terminal npx assumes it) and "--", and
// the version after the package's name when keepVersion is false (pkg@latest, @scope/pkg@1.2.3,
// pkg==1.2.3 for uvx). Which of the runner's many options take a value is not known here: a word
// after an option written without "=" is read both as its value and as the package (npx --cache
// DIR pkg, npx --quiet pkg). ok is false for a program that is not a package runner this knows.
func runnerReads(program string, args []string, keepVersion bool) (reads []runnerRead, ok bool) {
	switch strings.ToLower(program) {
	case "npx", "pnpx", "bunx", "uvx":
	default:
		return nil, false
	}
	var pkgs []string
	addPkg := func(spec string) {
		if !keepVersion {
			spec = packageName(spec)
		}
		pkgs = append(pkgs, spec)
	}
	read := func(opts []string, pkg string, rest []string) runnerRead {
		if !keepVersion {
			pkg = packageName(pkg)
		}
		return runnerRead{opts: slices.Clone(opts), run: append([]string{pkg}, rest...), pkgs: slices.Clone(pkgs)}
	}
	var opts []string
	valued := false // the word before is an option that may take this one as its value
	for i := 0; i < len(args); i++ {
		a := args[i]
		if v, inline, ok := packageOption(program, a); ok {
			// Its value is always a package (not an option's value that could be the command):
			// kept apart from the options, so that -p P, --package P and --package=P read alike.
			switch {
			case inline:
				addPkg(v)
			case i+1 < len(args):
				i++
				addPkg(args[i])
			}
			valued = false
			continue
		}
		switch {
		case a == "-y" || a == "--yes":
			valued = false
			continue
		case a == "--":
			// "--" ends npx's options: npx -- pkg runs pkg
			if i+1 < len(args) {
				reads = append(reads, read(opts, args[i+1], args[i+2:]))
			}
			return reads, true
		case strings.HasPrefix(a, "-"):
			opts = append(opts, a)
			valued = !strings.Contains(a, "=")
			continue
		}
		reads = append(reads, read(opts, a, args[i+1:]))
		if !valued {
			return reads, true
		}
		opts = append(opts, a) // or the option's value
		valued = false
	}
	if len(reads) == 0 {
		reads = append(reads, runnerRead{opts: opts, pkgs: pkgs}) // no package
	}
	return reads, true
}

// packageName is a package spec without its version: @scope/pkg@1.2.3 and pkg@latest lose what
// follows the '@' after the name, pkg==1.2.3 (uvx) what follows "==".
func packageName(spec string) string {
	if i := strings.Index(spec, "=="); i > 0 {
		return spec[:i]
	}
	if i := strings.LastIndexByte(spec, '@'); i > 0 {
		return spec[:i]
	}
	return spec
}

// denyArgsMatch reports whether a deny rule's arguments cover args: the same list, or, for a
// package runner, the same package run with the same arguments, with the rule's options among
// those given before it and any others (npx --quiet pkg is npx pkg); a version matters only when
// the rule names one. A package the rule runs is also matched where the launch installs it by an
// option and runs a command with it (npx -p pkg bin, npx --package=pkg bin, uvx --from pkg bin,
// uvx --with pkg other): with the rule's arguments after that command when the rule has any.
func denyArgsMatch(program string, rule, args []string) bool {
	if slices.Equal(rule, args) {
		return true
	}
	ruleReads, ok := runnerReads(program, rule, true)
	if !ok {
		return false
	}
	unversioned, _ := runnerReads(program, rule, false)
	for j, r := range ruleReads {
		// The rule names a version (of what it runs or installs): only that version.
		keep := !slices.Equal(unversioned[j].run, r.run) || !slices.Equal(unversioned[j].pkgs, r.pkgs)
		got, _ := runnerReads(program, args, keep)
		for _, g := range got {
			if slices.Equal(r.run, g.run) && subset(r.opts, g.opts) && subset(r.pkgs, g.pkgs) {
				return true
			}
			if len(r.run) > 0 && slices.Contains(g.pkgs, r.run[0]) && subset(r.opts, g.opts) &&
				(len(r.run) == 1 || len(g.run) > 0 && slices.Equal(r.run[1:], g.run[1:])) {
				return true
			}
		}
	}
	return false
}

// subset reports whether every word of a is in b.
func subset(a, b []string) bool {
	for _, w := range a {
		if !slices.Contains(b, w) {
			return false
		}
	}
	return true
}
