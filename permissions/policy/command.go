package policy

import (
	"path/filepath"
	"slices"
	"strings"
)

// A deny by serverCommand names a program run a certain way. The same run can be spelled in other
// ways that Claude Code's exact comparison misses; a deny matches each of them (an allow still
// matches only what it names). unwrapped gives the launches a wrapper starts, runnerArgs the
// arguments of a package runner as it understands them.

// maxUnwrap bounds how many wrappers deep a launch is looked into (env sh -c "env npx ...").
const maxUnwrap = 4

// unwrapped returns l and each launch that l starts through a wrapper: env (its options and
// NAME=VALUE assignments), sh/bash/dash/zsh -c with a script of plain words (exec and
// assignments in front allowed), npm exec (as npx), and nice, nohup, setsid, ionice, stdbuf,
// timeout, taskset and chrt. A script with quotes, variables or operators is not taken
// apart: what it runs cannot be told without running a shell.
//
// The program a wrapper starts is found as lookPath finds it ("" when it cannot be).
func unwrapped(l Launch, lookPath func(string) (string, error)) []Launch {
	out := []Launch{l}
	for range maxUnwrap {
		cmd, args, ok := unwrapOnce(out[len(out)-1])
		if !ok {
			break
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
	return out
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
			if len(l.Args) > 0 && (l.Args[0] == "exec" || l.Args[0] == "x") {
				args := slices.Clone(l.Args[1:])
				if i := slices.Index(args, "--"); i >= 0 {
					args = slices.Delete(args, i, i+1)
				}
				return "npx", args, true
			}
		default:
			if valued, ok := wrappers[name]; ok {
				return afterWrapper(name, valued, l.Args)
			}
		}
	}
	return "", nil, false
}

// wrappers are programs that run the command after their options unchanged (nice, nohup,
// timeout, ...), each with its options that take a value as the next argument.
var wrappers = map[string][]string{
	"nohup":   nil,
	"setsid":  nil,
	"nice":    {"-n", "--adjustment"},
	"ionice":  {"-c", "--class", "-n", "--classdata"},
	"stdbuf":  {"-i", "--input", "-o", "--output", "-e", "--error"},
	"timeout": {"-s", "--signal", "-k", "--kill-after"},
	"taskset": nil,
	"chrt":    nil,
}

// afterWrapper skips a wrapper's options (and their values) and what it takes before the
// command (timeout's duration, taskset's mask, chrt's priority) and returns the command.
func afterWrapper(name string, valued, args []string) (string, []string, bool) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		if name == "nice" && len(a) > 1 && a[1] >= '0' && a[1] <= '9' {
			continue // nice -10: the old spelling of -n 10
		}
		if slices.Contains(valued, a) {
			i++ // the option's value
		}
	}
	switch name {
	case "timeout", "taskset", "chrt":
		i++ // the duration, the CPU mask or list, the priority
	}
	if i >= len(args) {
		return "", nil, false
	}
	return args[i], args[i+1:], true
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

// afterEnv skips env's options and assignments and returns the command it runs.
func afterEnv(args []string) (string, []string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return args[i+1], args[i+2:], true
			}
			return "", nil, false
		case a == "-u" || a == "--unset" || a == "-C" || a == "--chdir":
			i++ // the option's value
		case a == "-S" || a == "--split-string":
			if i+1 >= len(args) {
				return "", nil, false
			}
			return afterEnv(append(strings.Fields(args[i+1]), args[i+2:]...))
		case strings.HasPrefix(a, "--split-string="):
			return afterEnv(append(strings.Fields(strings.TrimPrefix(a, "--split-string=")), args[i+1:]...))
		case strings.HasPrefix(a, "-"):
			// -i, -0, -v, --ignore-environment, --unset=X, --chdir=X, ...
		case strings.Contains(a, "="):
			// NAME=VALUE
		default:
			return a, args[i+1:], true
		}
	}
	return "", nil, false
}

// afterShell takes apart "-c SCRIPT" (or -lc, -ec, ..., after -o NAME or +e) when SCRIPT is
// plain words.
func afterShell(args []string) (string, []string, bool) {
	for i := 0; i < len(args)-1; i++ {
		a := args[i]
		if a == "-o" || a == "+o" || a == "-O" || a == "+O" {
			i++ // set -o's option name (pipefail, errexit)
			continue
		}
		if strings.HasPrefix(a, "+") && len(a) > 1 {
			continue // +e, +x: options turned off
		}
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			return "", nil, false
		}
		if strings.HasPrefix(a, "--") || !strings.ContainsRune(a, 'c') {
			continue // -e, -l, --login, ...
		}
		script := args[i+1]
		if strings.IndexFunc(script, func(r rune) bool { return !plainWordRune(r) }) >= 0 {
			return "", nil, false
		}
		words := strings.Fields(script)
		for len(words) > 0 && (words[0] == "exec" || strings.Contains(words[0], "=")) {
			words = words[1:]
		}
		if len(words) == 0 {
			return "", nil, false
		}
		return words[0], words[1:], true
	}
	return "", nil, false
}

func plainWordRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("@/._:=+-,% \t", r)
}

// runnerArgs is a package runner's argument list with what does not change the package it runs
// taken out: npx's -y/--yes (without a terminal npx assumes it) and "--", and the version after the
// package's name when keepVersion is false (pkg@latest, @scope/pkg@1.2.3, pkg==1.2.3 for uvx).
// ok is false for a program that is not a package runner this knows.
func runnerArgs(program string, args []string, keepVersion bool) (out []string, ok bool) {
	switch strings.ToLower(program) {
	case "npx", "pnpx", "bunx", "uvx":
	default:
		return nil, false
	}
	out = make([]string, 0, len(args))
	for i, a := range args {
		if a == "-y" || a == "--yes" || a == "--" {
			continue // "--" ends npx's options: npx -- pkg runs pkg
		}
		if strings.HasPrefix(a, "-") {
			out = append(out, a)
			continue
		}
		if !keepVersion {
			a = packageName(a)
		}
		return append(append(out, a), args[i+1:]...), true
	}
	return out, true
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
// package runner, the same package run with the same arguments (a version matters only when the
// rule names one).
func denyArgsMatch(program string, rule, args []string) bool {
	if slices.Equal(rule, args) {
		return true
	}
	ruleNorm, ok := runnerArgs(program, rule, true)
	if !ok {
		return false
	}
	keep := false
	if unversioned, _ := runnerArgs(program, rule, false); !slices.Equal(unversioned, ruleNorm) {
		keep = true // the rule names a version: only that version
	}
	got, _ := runnerArgs(program, args, keep)
	return slices.Equal(ruleNorm, got)
}
