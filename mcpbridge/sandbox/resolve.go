package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// Env is what Resolve needs to know about the server and the machine.
type Env struct {
	// Home is the user's home folder.
	Home string
	// Workspace lists the open workspace folders (absolute), read-only by default.
	Workspace []string
	// Base anchors the profile's relative paths ("./build"); the first workspace folder when empty.
	Base string
	// StateDir is this server's own folder, the only one it may write by default (its private
	// temp lives inside). Resolve creates it (0700).
	StateDir string
	// Protected are Switchboard's own state (tokens, allowlist, pins, audit) and the folder that
	// holds every server's StateDir: never opened, whatever the entry says. The server's own
	// StateDir may lie inside one of them.
	Protected []string
	// Command and Args as configured; Dir is the server's working folder; Path is the PATH the
	// command is looked up in (the host's when empty).
	Command string
	Args    []string
	Dir     string
	Path    string
}

// Plan is a resolved profile: absolute, symlink-free roots the kernel is told to allow.
type Plan struct {
	// Command is the resolved executable the launcher runs.
	Command string
	// Read and Write are the granted roots (Write implies read).
	Read, Write []string
	Network     Network
	// TempDir is the private temp (TMPDIR), inside StateDir.
	TempDir string
	// Denied are the always-denied paths this plan was checked against (for messages and tests).
	Denied []string
	// Home is the user's home folder, for writing paths as a person reads them (~/.ssh).
	Home string
	// Overlays are package caches the server sees writable through an overlay whose upper layer
	// is in its own folder: npx and uvx work as they do outside, and the user's cache, which
	// unsandboxed programs run from, is never changed by the server.
	Overlays []Overlay
	env      []string // the server's environment, in the launcher (launchPlan.Env)

	// Hide are folders the launcher covers with an empty file system (granted roots inside are
	// mounted back): connect(2) to a pathname Unix socket is not checked by Landlock before ABI 9,
	// so an ssh-agent, gpg-agent or docker socket must not be there to find.
	Hide []string

	// Fixed are the paths inside the listed write folders that git, an editor, a shell or an
	// agent runs code from, or reads its servers from (runsCode), unless the entry lists them by
	// name: they stay read-only. On Linux those that exist at start are bound read-only over
	// themselves (Landlock only allows, so it cannot carve them out of a writable folder; a
	// mount point can also be neither removed nor renamed, nor renamed over); macOS denies
	// writes to each, there or not.
	Fixed []string
	// Anchors are the folders between a write folder and a Fixed path that are not fixed
	// themselves (.git when the entry lists it): bound over themselves, so they cannot be
	// renamed away and made again without the fixed path in them.
	Anchors []string
	// Reopen are listed write folders inside a Fixed path (".git/hooks" inside .git), bound
	// writable again over it.
	Reopen []string

	// Secrets are the dotenv files (secretFile) found in the workspace folders and the listed
	// ones, down to secretDepth folders, that the entry does not list by name: the server sees
	// them empty (Linux: an empty read-only file bound over each; macOS: denied). Empty is where
	// the Linux launcher makes that file (in the server's state folder, anew at each start).
	Secrets []string
	Empty   string
}

// Overlay is one overlay mount: Target (the real cache, the lower layer) seen with the server's
// writes kept in Upper (Work is overlayfs's scratch folder).
type Overlay struct {
	Target, Upper, Work string
}

// secretsInHome are the user's secrets, relative to the home folder. None is ever granted, and
// no granted folder contains one.
var secretsInHome = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".netrc", ".npmrc",
	".pypirc", ".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub",
	".local/share/keyrings", ".password-store", ".pki", ".vault-token", ".terraform.d",
	".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".mozilla",
	".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".thunderbird",
	"Library/Keychains", "Library/Cookies", ".bash_history", ".zsh_history", ".python_history",
	".node_repl_history", ".psql_history", ".mysql_history", ".lesshst", ".viminfo",
	".sh_history", ".zhistory", ".history", ".local/share/fish/fish_history", ".config/fish/fish_history",
	".sqlite_history", ".rediscli_history",
	// Database, cloud storage and package registry passwords and tokens.
	".pgpass", ".my.cnf", ".mylogin.cnf", ".s3cfg", ".config/rclone", ".yarnrc", ".yarnrc.yml",
	// Files, not their folders: ~/.m2/repository and ~/.gradle/caches hold what Java servers run,
	// and stay grantable (a listed ~/.m2 is refused as holding settings.xml: list its repository).
	".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties",
	".config/switchboard", ".local/state/switchboard", ".cache/switchboard",
	// Other AI tools' sign-ins: Claude Code, GitHub Copilot, Codex, Gemini CLI (its files, not
	// ~/.gemini: an entry may name ~/.gemini/settings.json, see grantPackage).
	".claude", ".claude.json", ".config/github-copilot", ".codex",
	".gemini/oauth_creds.json", ".gemini/google_accounts.json", ".gemini/mcp-oauth-tokens.json", ".gemini/.env",
	// Other MCP hosts' configs, whose servers' env holds tokens, and AI tools' key files: Cursor,
	// Windsurf, Claude Desktop, VS Code's user MCP file, Zed, Continue, Aider.
	".cursor", ".codeium", ".config/Claude", "Library/Application Support/Claude", ".config/Code/User/mcp.json",
	".config/Code - Insiders/User/mcp.json", "Library/Application Support/Code/User/mcp.json", ".config/zed/settings.json",
	".continue", ".aider.conf.yml",
}

// secretsOnSystem are system files that a process running as root could otherwise read.
var secretsOnSystem = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh", "/etc/sudoers",
	"/etc/sudoers.d", "/etc/ssl/private", "/run/secrets", "/var/run/secrets", "/root",
}

// cachesInHome are the package managers' homes, so `npx -y` and `uvx` servers start (read only:
// a server that could write them could plant code that runs outside its sandbox; the caches in
// overlayCaches are writable through an overlay instead).
var cachesInHome = []string{
	".npm", ".cache/uv", ".local/share/uv", ".cache/node", ".cache/node-gyp", ".nvm", ".volta",
	".bun", ".deno", ".cache/deno", ".local/bin", ".local/lib", ".pyenv", ".cache/pip", ".cargo/bin",
	".rustup", "go/bin", "go/pkg/mod", ".cache/go-build",
}

// overlayCaches are the caches npx and uvx write even to run what they hold (npm rewrites its
// index on a read, and reads nothing when it cannot).
var overlayCaches = []string{".npm", ".cache/uv"}

// runsCode are the paths, relative to a folder the entry lets the server write, that make git,
// an editor, a shell or an agent run code outside the sandbox later, or change which servers
// run: git's hooks and config (core.hooksPath, core.fsmonitor, filters; commondir points git at
// another config), hook folders that core.hooksPath often names, the configs of hook managers
// (pre-commit, lefthook, overcommit) whose hooks read their commands there, editors' workspace
// settings and tasks, direnv's and mise's files, and the MCP and agent configs of this and other
// hosts. All of .git is here: a server may create files in it that git reads (commondir), and on
// Linux only a path that exists can be kept read-only, so a server that is to commit lists ".git"
// (its hooks and config stay read-only even then unless listed too).
var runsCode = []string{
	".git", ".git/hooks", ".git/config", ".git/config.worktree", ".git/commondir", ".git/info",
	".git/modules", ".git/worktrees", ".githooks", ".husky",
	".vscode", ".idea", ".devcontainer", ".zed", ".helix", ".nvim.lua", ".nvimrc", ".exrc",
	".lazy.lua", ".envrc", ".mise.toml", "mise.toml", ".mise",
	".mcp.json", ".switchboard", ".cursor", ".claude",
	// Hook managers: the hook git runs (kept read-only above) reads the commands it runs from these
	// at each commit.
	".pre-commit-config.yaml", ".pre-commit-config.yml", "lefthook.yml", ".lefthook.yml", "lefthook.yaml",
	".lefthook.yaml", "lefthook.toml", ".lefthook.toml", "lefthook.json", ".lefthook.json",
	"lefthook-local.yml", ".lefthook-local.yml", ".overcommit.yml",
}

// RunsCode reports whether path, as an entry spells it ("./.git/hooks", "/home/u/p/.vscode"),
// is or lies inside one of the paths that make git, an editor or a shell run code outside the
// sandbox, and returns that path's name (".git/hooks").
func RunsCode(path string) (string, bool) {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(path)), "/")
	best := ""
	for i := range parts {
		for j := i + 1; j <= len(parts); j++ {
			name := strings.Join(parts[i:j], "/")
			if slices.Contains(runsCode, name) && len(name) > len(best) {
				best = name
			}
		}
	}
	return best, best != ""
}

// Resolve turns a profile into the roots the kernel allows. It refuses a path the user listed
// that is or holds a secret (the message names it), and leaves out of the default profile
// whatever would: a workspace that is the home folder is granted child by child, without ~/.ssh.
func Resolve(p Profile, env Env) (*Plan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if env.Home == "" || !filepath.IsAbs(env.Home) {
		return nil, errors.New("sandbox: the home folder is unknown")
	}
	if env.StateDir == "" || !filepath.IsAbs(env.StateDir) {
		return nil, errors.New("sandbox: the server's state folder is unknown")
	}
	r := resolver{env: env}
	r.plan.Home = env.Home
	for _, s := range secretsInHome {
		r.addDenied(filepath.Join(env.Home, s))
	}
	for _, s := range secretsOnSystem {
		if s == "/root" && within(env.Home, "/root") {
			continue // the home folder's own secrets are listed above
		}
		r.addDenied(s)
	}
	for _, s := range env.Protected {
		r.addDenied(s)
	}

	cmd, err := lookPath(env.Command, env.Path, env.Dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	r.plan.Command = cmd

	// Own state and temp: ours to make, so inside Protected is fine, but never holding a secret.
	state := filepath.Clean(env.StateDir)
	tmp := filepath.Join(state, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: state folder: %w", err)
	}
	if real, err := filepath.EvalSymlinks(state); err == nil {
		state = real
	}
	if d := r.containedDenied(state); d != "" {
		return nil, fmt.Errorf("sandbox: the state folder %s holds %s", r.show(state), r.show(d))
	}
	r.plan.Write = append(r.plan.Write, state)
	r.plan.TempDir = filepath.Join(state, "tmp")

	r.plan.Read = append(r.plan.Read, r.systemRoots()...)
	for _, c := range cachesInHome {
		r.grantDefault(filepath.Join(env.Home, c), false)
	}
	for i, c := range overlayCaches {
		real, err := filepath.EvalSymlinks(filepath.Join(env.Home, c))
		if err != nil || r.insideDenied(real) != "" || r.containedDenied(real) != "" {
			continue
		}
		o := Overlay{Target: real, Upper: filepath.Join(state, "overlay", strconv.Itoa(i), "upper"), Work: filepath.Join(state, "overlay", strconv.Itoa(i), "work")}
		if os.MkdirAll(o.Upper, 0o700) != nil || os.MkdirAll(o.Work, 0o700) != nil {
			continue
		}
		r.plan.Overlays = append(r.plan.Overlays, o)
	}
	// The command's own package (a symlinked npx leads into npm's), then any argument that names
	// an existing file (node server.js): its package too.
	r.grantPackage(cmd, false)
	if real, err := filepath.EvalSymlinks(cmd); err == nil && real != cmd {
		r.grantPackage(real, false)
	}
	for _, a := range env.Args {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		path := a
		if !filepath.IsAbs(path) {
			if env.Dir == "" {
				continue
			}
			path = filepath.Join(env.Dir, path)
		}
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			r.grantPackage(path, true)
		}
	}
	for _, w := range env.Workspace {
		r.grantDefault(w, false)
	}

	for _, path := range p.Read {
		if err := r.grantListed("read", path, false); err != nil {
			return nil, err
		}
	}
	for _, path := range p.Write {
		if err := r.grantListed("write", path, true); err != nil {
			return nil, err
		}
	}
	if err := r.checkLinkedWrites(); err != nil {
		return nil, err
	}
	if err := r.fixCode(); err != nil {
		return nil, err
	}
	if err := r.findSecrets(p, state); err != nil {
		return nil, err
	}
	r.plan.Network = p.Network
	hide := []string{"/tmp", "/var/tmp", "/run", "/dev/shm", env.Home}
	if x := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		hide = append(hide, x)
	}
	hide = append(hide, r.denied...)
	for _, h := range hide {
		real, err := filepath.EvalSymlinks(h)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(real); err == nil && fi.IsDir() && real != "/" {
			r.plan.Hide = append(r.plan.Hide, real)
		}
	}
	r.plan.Hide = compactRoots(r.plan.Hide)
	r.plan.Read = compactRoots(r.plan.Read)
	r.plan.Write = compactRoots(r.plan.Write)
	r.plan.Denied = r.denied
	return &r.plan, nil
}

// secretFile reports whether a file's name is a dotenv file, where projects keep their keys and
// passwords: .env and .env.* (.env.local, .env.production, ...), except the templates committed
// beside them (.env.example, .env.sample, .env.template, .env.dist, .env.defaults).
func secretFile(name string) bool {
	if name != ".env" && !strings.HasPrefix(name, ".env.") {
		return false
	}
	for _, t := range []string{".example", ".sample", ".template", ".dist", ".defaults"} {
		if strings.HasSuffix(strings.ToLower(name), t) {
			return false
		}
	}
	return true
}

// secretDepth is how many folders down from a workspace or listed folder findSecrets looks (0:
// the folder itself); secretScan bounds the folders it reads in each, so that a huge repository
// does not hold the server's start; secretBytes bounds the covered paths together (the plan
// reaches the launcher in one environment variable, which Linux caps at 128 KiB). Past either
// bound the server is not started: a file left uncovered would be read, and a repository or a
// server that can write there could fill the look on purpose.
const (
	secretDepth = 3
	secretScan  = 10000
	secretBytes = 48 << 10
)

// secretSkip are folders findSecrets does not look into: dependencies and build output, whose
// dotenv files are their authors' examples, and .git.
var secretSkip = []string{".git", "node_modules", "vendor", ".venv", "venv", "__pycache__", "target", "dist", "build", ".next", ".cache"}

// findSecrets fills the plan's Secrets and Empty: the dotenv files in the workspace folders and
// the listed read and write folders, down to secretDepth, other than those the entry lists by name
// (read or write): a server that needs one says so. A folder reached through a symbolic link is
// looked into where it really is, when that is inside the folder being read (its depth counted
// from the link). A dotenv file that is itself a symbolic link is not followed: it leads to a
// file the server reads by its own name anyway (or not at all), and covering what it names would
// let a repository blank any of its files. The folders between a listed write folder and a
// covered file become Anchors: a server that could rename them would move the file past the next
// start's look (under node_modules, or deeper).
func (r *resolver) findSecrets(p Profile, state string) error {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		return nil // no sandbox there (launch_other.go)
	}
	var roots []string
	listed := map[string]bool{}
	for _, w := range r.env.Workspace {
		roots = append(roots, w)
	}
	for _, path := range append(slices.Clone(p.Read), p.Write...) {
		abs, err := r.abs(path)
		if err != nil {
			continue // grantListed said so already
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			continue
		}
		listed[real] = true
		if fi, err := os.Stat(real); err == nil && fi.IsDir() {
			roots = append(roots, real)
		}
	}
	seen := map[string]bool{}
	size := 0
	type dir struct {
		path  string
		depth int
	}
	for _, root := range roots {
		rootReal, err := filepath.EvalSymlinks(root)
		if err != nil || seen[rootReal] {
			continue
		}
		queue := []dir{{rootReal, 0}}
		for scanned := 0; len(queue) > 0; scanned++ {
			if scanned == secretScan {
				return fmt.Errorf("sandbox: %s holds more than %d folders in its first %d levels (outside dependencies and build output), so the sandbox cannot look for the .env files it must keep from the server; open a smaller folder, or run this server without a sandbox", r.show(root), secretScan, secretDepth+1)
			}
			d := queue[0]
			queue = queue[1:]
			if seen[d.path] {
				continue
			}
			seen[d.path] = true
			ents, err := os.ReadDir(d.path)
			if err != nil {
				continue
			}
			for _, e := range ents {
				path := filepath.Join(d.path, e.Name())
				switch {
				case e.Type()&fs.ModeSymlink != 0:
					if d.depth >= secretDepth || slices.Contains(secretSkip, e.Name()) {
						continue
					}
					if real, err := filepath.EvalSymlinks(path); err == nil && within(real, rootReal) {
						if fi, err := os.Stat(real); err == nil && fi.IsDir() {
							queue = append(queue, dir{real, d.depth + 1})
						}
					}
				case e.IsDir():
					if d.depth < secretDepth && !slices.Contains(secretSkip, e.Name()) && r.readable(path) && !r.cacheInHome(path) {
						queue = append(queue, dir{path, d.depth + 1})
					}
				case e.Type().IsRegular() && secretFile(e.Name()) && !listed[path] && r.readable(path):
					if size += len(path) + 1; size > secretBytes {
						return fmt.Errorf("sandbox: %s holds more .env files than the sandbox can keep from the server (%d KiB of their names); remove the ones you do not use, or run this server without a sandbox", r.show(root), secretBytes>>10)
					}
					r.plan.Secrets = append(r.plan.Secrets, path)
				}
			}
		}
	}
	slices.Sort(r.plan.Secrets)
	r.plan.Secrets = slices.Compact(r.plan.Secrets)
	if len(r.plan.Secrets) == 0 {
		return nil
	}
	for _, f := range r.plan.Secrets {
		for _, w := range r.listedWrite {
			if !within(f, w) {
				continue
			}
			for a := filepath.Dir(f); a != w && within(a, w); a = filepath.Dir(a) {
				if !slices.Contains(r.plan.Fixed, a) && !slices.Contains(r.plan.Anchors, a) {
					r.plan.Anchors = append(r.plan.Anchors, a)
				}
			}
		}
	}
	slices.Sort(r.plan.Anchors)
	r.plan.Empty = filepath.Join(state, "empty") // made afresh by the launcher (coverSecrets)
	return nil
}

// cacheInHome reports whether path is one of the package managers' homes (cachesInHome): code
// the server runs, not a project's, and thousands of folders a workspace that is the home folder
// would otherwise spend the look on.
func (r *resolver) cacheInHome(path string) bool {
	for _, c := range cachesInHome {
		if path == filepath.Join(r.env.Home, c) {
			return true
		}
	}
	return false
}

// readable reports whether path lies in a folder the plan lets the server read or write.
func (r *resolver) readable(path string) bool {
	for _, root := range append(slices.Clone(r.plan.Read), r.plan.Write...) {
		if within(path, root) {
			return true
		}
	}
	return false
}

// systemCache keeps the system roots for a while: expanding /etc child by child (to leave out
// /etc/shadow and /etc/ssh) is most of a Resolve's time, and the same for every server.
var systemCache struct {
	mu    sync.Mutex
	key   string
	at    time.Time
	roots []string
}

const systemCacheFor = time.Minute

// systemRoots grants systemRead as grantDefault does, through systemCache.
func (r *resolver) systemRoots() []string {
	key := strings.Join(r.denied, "\x00")
	systemCache.mu.Lock()
	defer systemCache.mu.Unlock()
	if systemCache.key == key && time.Since(systemCache.at) < systemCacheFor {
		return systemCache.roots
	}
	saved := r.plan.Read
	r.plan.Read = nil
	for _, d := range systemRead {
		r.grantDefault(d, false)
	}
	roots := slices.Clip(r.plan.Read)
	r.plan.Read = saved
	systemCache.key, systemCache.at, systemCache.roots = key, time.Now(), roots
	return roots
}

type resolver struct {
	env    Env
	denied []string
	plan   Plan
	// listedWrite are the write folders the entry lists, resolved.
	listedWrite []string
	// plainWrite are those written as they are (no symlink in the repository on the way);
	// linkedWrite are the others, checked by checkLinkedWrites.
	plainWrite  []string
	linkedWrite []linkedWrite
}

// linkedWrite is a listed write path in the repository that goes through a symlink the
// repository holds: path as written, real where it leads, base the repository folder, resolved.
type linkedWrite struct {
	path, real, base string
}

// checkLinkedWrites refuses a write path in the repository that goes through a symlink the
// repository holds, even one that stays inside it (to .git/hooks, to the repository itself): the
// server would write what the link names, not what the person was shown, and the code paths
// kept read-only inside a listed folder would not be kept in the folder itself; the repository
// can also retarget the link later without changing the entry. Unless the link leads into
// another listed folder, written as it is, and not to a code path: then it grants nothing more
// than the person saw. (A read through such a link gives nothing more: the repository is
// readable anyway.)
func (r *resolver) checkLinkedWrites() error {
	for _, l := range r.linkedWrite {
		rel, _ := filepath.Rel(l.base, l.real) // ignore error: both absolute
		_, code := RunsCode(rel)
		covered := slices.ContainsFunc(r.plainWrite, func(w string) bool { return within(l.real, w) })
		if code || !covered {
			return fmt.Errorf("sandbox: write %q: it is a symbolic link (or goes through one) to %s; list that path itself if the server is to write there", safetext.Line(l.path), r.show(l.real))
		}
	}
	return nil
}

// fixCode fills the plan's Fixed, Anchors and Reopen from the listed write folders. A fixed
// path or anchor that is a symbolic link is refused: a mount lands on what the link names, so
// the link itself could be replaced by a folder of the server's making.
func (r *resolver) fixCode() error {
	listed := func(p string) bool {
		if slices.Contains(r.listedWrite, p) {
			return true
		}
		real, err := filepath.EvalSymlinks(p)
		return err == nil && slices.Contains(r.listedWrite, real)
	}
	link := func(p string) error {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return nil
		}
		if listed(p) {
			// An anchor the entry lists (.git when it holds the hooks kept read-only): the
			// server could put a folder of its own in the link's place.
			return fmt.Errorf("sandbox: write: %s is a symbolic link, so the sandbox cannot keep it in place (the server could put a folder of its own there, with code git, an editor or a shell runs); make it a plain folder", r.show(p))
		}
		return fmt.Errorf("sandbox: write: %s is a symbolic link, which the sandbox cannot keep read-only (git, an editor or a shell runs code from it); list it under write to let the server change it, or make it a plain file or folder", r.show(p))
	}
	var fixed, anchors []string
	for _, root := range r.listedWrite {
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			continue
		}
		for _, name := range runsCode {
			p := filepath.Join(root, name)
			if listed(p) {
				continue
			}
			if err := link(p); err != nil {
				return err
			}
			fixed = append(fixed, p)
			for d := filepath.Dir(p); d != root && within(d, root); d = filepath.Dir(d) {
				if err := link(d); err != nil {
					return err
				}
				anchors = append(anchors, d)
			}
		}
		// A repository one level down (a clone inside the project, a submodule): editors open
		// those too (VS Code's git looks one folder deep) and run git in them.
		ents, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.IsDir() || slices.Contains(runsCode, e.Name()) {
				continue
			}
			p := filepath.Join(root, e.Name(), ".git")
			if _, err := os.Lstat(p); err != nil || listed(p) {
				continue
			}
			if err := link(p); err != nil {
				return err
			}
			fixed = append(fixed, p)
		}
	}
	slices.Sort(fixed)
	fixed = slices.Compact(fixed)
	slices.Sort(anchors)
	anchors = slices.Compact(anchors)
	for _, a := range anchors {
		if !slices.Contains(fixed, a) {
			r.plan.Anchors = append(r.plan.Anchors, a)
		}
	}
	r.plan.Fixed = fixed
	for _, w := range r.listedWrite {
		for _, f := range fixed {
			if within(w, f) && w != f {
				r.plan.Reopen = append(r.plan.Reopen, w)
				break
			}
		}
	}
	slices.Sort(r.plan.Reopen)
	r.plan.Reopen = slices.Compact(r.plan.Reopen)
	return nil
}

func (r *resolver) addDenied(p string) {
	p = filepath.Clean(p)
	r.denied = append(r.denied, p)
	if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
		r.denied = append(r.denied, real)
	}
}

// insideDenied returns the denied path that p is or lies in, containedDenied the one p holds.
func (r *resolver) insideDenied(p string) string {
	for _, d := range r.denied {
		if within(p, d) {
			return d
		}
	}
	return ""
}

func (r *resolver) containedDenied(p string) string {
	for _, d := range r.denied {
		if within(d, p) && d != p {
			return d
		}
	}
	return ""
}

// grantDefault grants a default root if it exists: whole when it holds no secret, else child by
// child without the secrets (Landlock allows by root, so the root itself must not be granted).
func (r *resolver) grantDefault(p string, write bool) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return // a default folder that is not there is not needed
	}
	if r.insideDenied(real) != "" {
		return
	}
	if r.containedDenied(real) == "" {
		r.add(real, write)
		return
	}
	ents, err := os.ReadDir(real)
	if err != nil {
		return
	}
	for _, e := range ents {
		child := filepath.Join(real, e.Name())
		if e.Type()&fs.ModeSymlink != 0 {
			// Landlock checks what a link names: grant a named file (/etc/resolv.conf into /run)
			// unless it is a secret; a named folder only through its own grant.
			if target, err := filepath.EvalSymlinks(child); err == nil && r.insideDenied(target) == "" {
				if fi, err := os.Stat(target); err == nil && !fi.IsDir() {
					r.add(target, write)
				}
			}
			continue
		}
		r.grantDefault(child, write)
	}
}

// grantPackage grants the folder of a program or script, widened to its package (the nearest
// folder above with a package.json, pyproject.toml, go.mod or Cargo.toml, below the home
// folder), or only the file when that folder holds a secret. For an argument (arg) in a hidden
// folder of the home folder (where programs keep their settings and sign-ins) that is in no
// package, only the file: an entry names it ("${userHome}/.gemini/settings.json"), and the
// folder beside it (~/.gemini/oauth_creds.json) is nothing the person was shown.
func (r *resolver) grantPackage(file string, arg bool) {
	real, err := filepath.EvalSymlinks(file)
	if err != nil || r.insideDenied(real) != "" {
		return
	}
	dir := filepath.Dir(real)
	found := false
	for d := dir; within(d, r.env.Home) && d != r.env.Home; d = filepath.Dir(d) {
		if hasAny(d, "package.json", "pyproject.toml", "setup.py", "go.mod", "Cargo.toml") {
			dir, found = d, true
			break
		}
	}
	if r.containedDenied(dir) != "" || dir == "/" || arg && !found && r.hiddenInHome(dir) {
		r.add(real, false)
		return
	}
	r.add(dir, false)
}

// hiddenInHome: dir is or lies in a folder of the home folder whose name starts with a dot.
func (r *resolver) hiddenInHome(dir string) bool {
	rel, err := filepath.Rel(r.env.Home, dir)
	if err != nil || !within(dir, r.env.Home) {
		return false
	}
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.HasPrefix(part, ".") && part != "." && part != ".." {
			return true
		}
	}
	return false
}

// grantListed grants a path the user listed in the entry. It must exist and must neither be nor
// hold a secret: the user is told which, rather than given less than they wrote.
func (r *resolver) grantListed(key, path string, write bool) error {
	abs, err := r.abs(path)
	if err != nil {
		return fmt.Errorf("sandbox: %s %q: %w", key, safetext.Line(path), err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sandbox: %s %q: %s does not exist (create it first)", key, safetext.Line(path), r.show(abs))
		}
		return fmt.Errorf("sandbox: %s %q: %w", key, safetext.Line(path), err)
	}
	if d := r.insideDenied(real); d != "" {
		return fmt.Errorf("sandbox: %s %q: %s is never opened to a sandboxed server", key, safetext.Line(path), r.show(d))
	}
	if d := r.containedDenied(real); d != "" {
		return fmt.Errorf("sandbox: %s %q: it holds %s, which is never opened to a sandboxed server; list the folders inside it that the server needs", key, safetext.Line(path), r.show(d))
	}
	// The person was shown the path as written: a relative one inside its base folder (a
	// repository's "./out") must not lead out of it through a symlink the repository holds,
	// which it can also retarget later without changing the entry.
	if b := r.base(); b != "" && relativePath(path) && within(abs, b) {
		rb, err := filepath.EvalSymlinks(b)
		if err != nil {
			rb = b
		}
		if !within(real, rb) {
			return fmt.Errorf("sandbox: %s %q: it leads out of %s through a symbolic link, to %s; list that folder itself if the server is to have it", key, safetext.Line(path), r.show(b), r.show(real))
		}
	}
	// A write path in the repository must be where it is written: through a symlink the
	// repository holds, even one that stays inside it (to .git/hooks, to the repository itself),
	// the server would write what the link names, not what the person was shown, and the code
	// paths kept read-only inside a listed folder would not be kept in the folder itself. The
	// repository can also retarget the link later without changing the entry. (A read through one
	// gives nothing more: the repository is readable anyway.)
	r.add(real, write)
	if !write {
		return nil
	}
	r.listedWrite = append(r.listedWrite, real)
	for _, b := range append([]string{r.base()}, r.env.Workspace...) {
		if b == "" || !within(abs, b) {
			continue
		}
		rb, err := filepath.EvalSymlinks(b)
		if err != nil {
			rb = b
		}
		rel, _ := filepath.Rel(b, abs) // ignore error: abs is within b
		if real != filepath.Join(rb, rel) {
			r.linkedWrite = append(r.linkedWrite, linkedWrite{path: path, real: real, base: rb})
			return nil
		}
		break
	}
	r.plainWrite = append(r.plainWrite, real)
	return nil
}

// base is the folder relative paths are under ("" when there is none).
func (r *resolver) base() string {
	if r.env.Base != "" {
		return r.env.Base
	}
	if len(r.env.Workspace) > 0 {
		return r.env.Workspace[0]
	}
	return ""
}

// relativePath: p is written relative to the base folder (not ~, ~/..., nor absolute).
func relativePath(p string) bool {
	return p != "~" && !strings.HasPrefix(p, "~/") && !filepath.IsAbs(p)
}

func (r *resolver) abs(p string) (string, error) {
	switch {
	case p == "~":
		return r.env.Home, nil
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(r.env.Home, p[2:]), nil
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	case r.env.Base != "":
		return filepath.Join(r.env.Base, p), nil
	case len(r.env.Workspace) > 0:
		return filepath.Join(r.env.Workspace[0], p), nil
	}
	return "", errors.New("a relative path needs a workspace folder")
}

func (r *resolver) add(p string, write bool) {
	if write {
		r.plan.Write = append(r.plan.Write, p)
	} else {
		r.plan.Read = append(r.plan.Read, p)
	}
}

// show writes p for a person: "~/.ssh" rather than "/home/u/.ssh".
func (r *resolver) show(p string) string {
	if within(p, r.env.Home) {
		rel, _ := filepath.Rel(r.env.Home, p) // ignore error: p is within Home
		if rel == "." {
			return safetext.Line("~")
		}
		return safetext.Line("~/" + rel)
	}
	return safetext.Line(p)
}

// within reports whether p is dir or lies inside it.
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

func hasAny(dir string, names ...string) bool {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// compactRoots sorts, de-duplicates and drops roots inside another root of the same list.
func compactRoots(l []string) []string {
	slices.Sort(l)
	l = slices.Compact(l)
	var out []string
	for _, p := range l {
		if len(out) > 0 && within(p, out[len(out)-1]) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func lookPath(command, path, dir string) (string, error) {
	if command == "" {
		return "", errors.New("no command")
	}
	if strings.ContainsRune(command, filepath.Separator) {
		if !filepath.IsAbs(command) && dir != "" {
			command = filepath.Join(dir, command)
		}
		abs, err := filepath.Abs(command)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("command %s: %w", safetext.Line(command), err)
		}
		return abs, nil
	}
	if path == "" {
		path = os.Getenv("PATH")
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative PATH entry would resolve against a folder the sandbox may not see
		}
		p := filepath.Join(d, command)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %s: %w", safetext.Line(command), exec.ErrNotFound)
}
