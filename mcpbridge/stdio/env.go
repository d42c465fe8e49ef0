package stdio

import (
	"os"
	"runtime"
	"sort"
	"strings"
)

// passEnv are the variables a child inherits from the host when Options.BaseEnv is nil: what
// programs (and npx/uvx) need to run, nothing that usually holds a secret.
var passEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
	"TMPDIR", "TEMP", "TMP", "TERM", "SHELL", "TZ",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	// Windows essentials.
	"SYSTEMROOT", "SystemRoot", "COMSPEC", "PATHEXT", "WINDIR", "USERPROFILE", "APPDATA", "LOCALAPPDATA",
	"PROGRAMDATA", "ProgramFiles", "ProgramFiles(x86)", "HOMEDRIVE", "HOMEPATH", "USERNAME",
}

// passEnvPrefixes are inherited by prefix (XDG base directories).
var passEnvPrefixes = []string{"XDG_"}

// DefaultBaseEnv is the environment a child starts from when Options.BaseEnv is nil: the
// variables of passEnv and XDG_* taken from environ.
func DefaultBaseEnv(environ []string) []string {
	keep := make(map[string]bool, len(passEnv))
	for _, k := range passEnv {
		keep[k] = true
	}
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if keep[k] {
			out = append(out, kv)
			continue
		}
		for _, p := range passEnvPrefixes {
			if strings.HasPrefix(k, p) {
				out = append(out, kv)
				break
			}
		}
	}
	return out
}

// foldEnvCase: variable names are not case-sensitive (Windows), so a server's "PATH" must
// replace the inherited "Path" rather than sit beside it with either one taking effect.
var foldEnvCase = runtime.GOOS == "windows"

// ChildEnv is base with the server's env applied on top (server values win), sorted.
func ChildEnv(base []string, env map[string]string) []string {
	if base == nil {
		base = DefaultBaseEnv(os.Environ())
	}
	m := make(map[string]string, len(base)+len(env))
	for _, kv := range base {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	for k, v := range env {
		if foldEnvCase {
			for bk := range m {
				if strings.EqualFold(bk, k) {
					delete(m, bk)
				}
			}
		}
		m[k] = v
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
