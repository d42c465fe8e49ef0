package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// minABI is the Landlock ABI every sandbox needs: files with truncate and refer (3), TCP rules
// (4), device ioctls (5), and the scopes (6) that stop a server from signalling processes
// outside its sandbox (the host, other servers) and from reaching abstract Unix sockets.
const minABI = 6

// prepare points cmd at the launcher: new user and network namespaces unless the network is
// the user's, and a SOCK_SEQPACKET status socket on which the launcher reports a refusal (or,
// for a domain list, passes the proxy listener it made inside the namespace).
func (s *Sandbox) prepare(cmd *exec.Cmd, launcher string) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: status socket: %w", err)
	}
	s.host = os.NewFile(uintptr(fds[0]), "sandbox-status")
	s.child = os.NewFile(uintptr(fds[1]), "sandbox-status-child")
	cmd.ExtraFiles = append(cmd.ExtraFiles, s.child)
	lp := launchPlan{Plan: *s.plan, StatusFD: 2 + len(cmd.ExtraFiles), MinABI: s.opts.minABI, Env: serverEnv(cmd.Env, s.plan)}
	cmd.Path = launcher
	cmd.Err = nil // exec.Command's own look-up; the plan has resolved the command
	if len(cmd.Args) == 0 {
		cmd.Args = []string{s.plan.Command}
	}
	cmd.Env = []string{envPlan + "=" + encodePlan(lp)}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A user namespace (the same uid inside) lets the launcher make its own mounts (the cache
	// overlays) and network namespace; nothing it grants reaches outside.
	uid, gid := os.Getuid(), os.Getgid()
	// A PID namespace (the launcher its init) with its own /proc: the server sees its own process
	// tree only, not another process's command line (an unsandboxed server's --token).
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
	if s.plan.Network.Mode != NetAll {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
	}
	cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	return nil
}

// started reads the launcher's messages until the socket closes (the launcher started the server
// and closed its end; the server never had it: close-on-exec) or a refusal arrives.
func (s *Sandbox) started() error {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(int(s.host.Fd()), buf, oob, 0)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("sandbox: launcher status: %w", err)
		}
		if n == 0 && oobn == 0 {
			return nil // EOF: the server runs
		}
		msg := string(buf[:n])
		switch {
		case len(msg) > 0 && msg[0] == 'E':
			return errors.New(msg[1:])
		case msg == "L":
			cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err != nil || len(cmsgs) != 1 {
				return errors.New("sandbox: launcher sent no proxy listener")
			}
			fds, err := unix.ParseUnixRights(&cmsgs[0])
			if err != nil || len(fds) != 1 {
				return errors.New("sandbox: launcher sent no proxy listener")
			}
			f := os.NewFile(uintptr(fds[0]), "sandbox-proxy")
			ln, err := net.FileListener(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("sandbox: proxy listener: %w", err)
			}
			s.proxy = newProxy(s.plan.Network.Domains, s.opts.Dial, s.report)
			go s.proxy.serve(ln)
		}
	}
}

// Main is the launcher. cmd/switchboard's main and test binaries' TestMain call it before
// anything else; it returns at once unless this process was started by [Wrap], and otherwise
// never returns: it confines itself, starts the server and stays as its PID namespace's init
// until the server exits (then exits with the server's status), or reports why not and exits 126.
func Main() {
	raw, ok := os.LookupEnv(envPlan)
	if !ok {
		return
	}
	os.Unsetenv(envPlan)
	var lp launchPlan
	if err := json.Unmarshal([]byte(raw), &lp); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: launcher: bad plan: %v\n", err)
		os.Exit(exitLaunch)
	}
	status := os.NewFile(uintptr(lp.StatusFD), "sandbox-status")
	lp.Plan.env = lp.Env
	err := launch(&lp.Plan, status, max(lp.MinABI, minABI))
	// launch returns only on failure.
	msg := err.Error()
	fmt.Fprintf(os.Stderr, "%s\n", msg)
	unix.Sendmsg(int(status.Fd()), []byte("E"+msg), nil, nil, 0) // ignore error: stderr has it too
	os.Exit(exitLaunch)
}

func launch(plan *Plan, status *os.File, need int) error {
	if err := available(need); err != nil {
		return fmt.Errorf("%w, so it was not started", err)
	}
	env := plan.env
	var netRules []landlock.Rule
	if plan.Network.Mode != NetAll {
		// In a fresh network namespace loopback is down; up, it reaches only this namespace.
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("sandbox: network namespace: %w", err)
		}
	}
	if plan.Network.Mode == NetDomains {
		port, err := proxyListener(status)
		if err != nil {
			return fmt.Errorf("sandbox: proxy: %w", err)
		}
		netRules = append(netRules, landlock.ConnectTCP(uint16(port)))
		url := "http://127.0.0.1:" + strconv.Itoa(port)
		env = proxyEnv(env, url)
	}
	// Mounts from here on are this sandbox's alone.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("sandbox: mount namespace: %w; the server was not started", err)
	}
	// The /proc of this PID namespace, over the host's: the processes of this sandbox and no
	// other. Landlock keeps the server from unmounting it.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("sandbox: a private /proc: %w; the server was not started", err)
	}
	wd, wdErr := os.Getwd()
	mountOverlays(plan)
	if err := hide(plan); err != nil {
		return fmt.Errorf("sandbox: %w; the server was not started", err)
	}
	if err := fixCode(plan); err != nil {
		return fmt.Errorf("sandbox: %w; the server was not started", err)
	}
	if err := coverSecrets(plan); err != nil {
		return fmt.Errorf("sandbox: %w; the server was not started", err)
	}
	// The working folder is entered again, so a relative path cannot reach beneath a cover or a
	// read-only mount (a server started in .vscode) through the old one.
	if wdErr == nil {
		if err := reenter(plan, wd); err != nil {
			return fmt.Errorf("sandbox: %w; the server was not started", err)
		}
	}
	if err := confine(plan, netRules); err != nil {
		return err
	}
	// The status socket came through ExtraFiles without close-on-exec; with it, the server does
	// not inherit it, and the host sees EOF once this process closes it after the server started.
	unix.CloseOnExec(int(status.Fd()))
	// Every descriptor above it came from no one who meant the server to have it: one the host
	// holds without close-on-exec (leaked into it by the editor, or opened by a library) reaches
	// the launcher and would reach the server, which reads it whatever Landlock says (Landlock
	// checks paths at open, and this file was opened outside). The host's exec put the server's
	// own files (stdio, ExtraFiles) below the status socket.
	if err := unix.CloseRange(uint(status.Fd())+1, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("sandbox: close inherited files: %w; the server was not started", err)
	}
	// Signals asked for before the server starts are kept and passed on once it has.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	// The server gets stdin, stdout, stderr and the caller's other ExtraFiles, as exec gave them.
	files := make([]uintptr, status.Fd())
	for i := range files {
		files[i] = uintptr(i)
	}
	// Landlock confined this process thread by thread (a domain per thread, before ABI 8's
	// thread sync), and its signal scope lets a thread signal only processes of its own domain:
	// the server's is the thread that starts it, so that thread alone passes signals on.
	runtime.LockOSThread() // never unlocked: this goroutine ends in os.Exit
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("sandbox: %w; the server was not started", err)
	}
	pid, err := syscall.ForkExec(plan.Command, os.Args, &syscall.ProcAttr{Env: env, Files: files})
	if err != nil {
		return fmt.Errorf("sandbox: start %s: %w", plan.Command, err)
	}
	status.Close() // ignore error: the host reads EOF: the server runs
	os.Exit(initLoop(pid, sigs))
	return nil // not reached
}

// dropCapabilities leaves the server no capability in its user namespace, on the thread that
// starts it (capabilities are a thread's). A host run as root (a dev container) makes the
// namespace's uid 0 too, and root's exec is given every capability the bounding set holds: with
// them the server could clone a folder's mount without what is mounted over it (open_tree, which
// Landlock does not check) and read a covered .env, or write a git hook kept read-only. The
// bounding set is emptied, root gains nothing at exec (SECBIT_NOROOT, locked), and no capability
// is inheritable or ambient. A server run as another uid had none at exec already.
func dropCapabilities() error {
	for c := 0; c < 64; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EINVAL {
				break // past the kernel's last capability
			}
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	const secbitNoRoot, secbitNoRootLocked = 1 << 0, 1 << 1
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbitNoRoot|secbitNoRootLocked, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	return nil
}

// forwarded are the signals the launcher passes on to the server. As its PID namespace's init it
// gets from the host only the signals it handles (and SIGKILL, which ends it and, with it, every
// process of the namespace).
var forwarded = []os.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2}

// initLoop is the launcher's life once the server runs: it passes signals on to the server,
// reaps every process that ends in the namespace (orphans are its children now), and returns the
// server's exit status once the server has exited: its code, or 128 plus the signal that killed
// it (init cannot die of a signal it sends itself). The kernel then kills whatever is left in the
// namespace, so nothing the server started outlives it. It runs on the thread that started the
// server.
func initLoop(server int, sigs chan os.Signal) int {
	exited := make(chan int, 1)
	go reap(server, exited)
	for {
		select {
		case sig := <-sigs:
			unix.Kill(server, sig.(syscall.Signal)) // ignore error: the server may be gone
		case code := <-exited:
			return code
		}
	}
}

// reap waits for every child of the launcher and sends the server's exit status on exited.
func reap(server int, exited chan<- int) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			fmt.Fprintf(os.Stderr, "sandbox: launcher: wait: %v\n", err)
			exited <- exitLaunch
			return
		case pid != server:
			continue // an orphan, reaped
		case ws.Signaled():
			exited <- 128 + int(ws.Signal())
			return
		case ws.Exited():
			exited <- ws.ExitStatus()
			return
		}
	}
}

// confine applies the Landlock ruleset to this process (every thread), with no_new_privs.
func confine(plan *Plan, netRules []landlock.Rule) error {
	cfg := landlock.V6
	if plan.Network.Mode == NetAll {
		cfg.HandledAccessNet = 0
	}
	// Log denials after exec too (ABI 7), so the audit log can name what the server was refused.
	if v, _ := llsys.LandlockGetABIVersion(); v >= 7 {
		cfg = cfg.EnableLoggingForSubprocesses()
	}
	var rules []landlock.Rule
	for _, p := range plan.Read {
		rules = append(rules, fsRule(p, false))
	}
	for _, p := range plan.Write {
		rules = append(rules, fsRule(p, true))
	}
	rules = append(rules,
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom").WithIoctlDev().IgnoreIfMissing(),
	)
	rules = append(rules, netRules...)
	if err := cfg.Restrict(rules...); err != nil {
		return fmt.Errorf("sandbox: landlock: %w; the server was not started", err)
	}
	return nil
}

// mountOverlays mounts each cache overlay; one that fails leaves that cache read-only (npx may
// then fail, and says so), which confines no less.
func mountOverlays(plan *Plan) {
	for _, o := range plan.Overlays {
		opts := "lowerdir=" + o.Target + ",upperdir=" + o.Upper + ",workdir=" + o.Work
		if err := unix.Mount("overlay", o.Target, "overlay", 0, opts); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: %s stays read-only: overlay: %v\n", o.Target, err)
			continue
		}
		plan.Write = append(plan.Write, o.Target)
	}
}

// hide covers each of plan.Hide with an empty tmpfs and mounts back the granted roots inside it
// (opened before the cover, bound from /proc/self/fd).
func hide(plan *Plan) error {
	if len(plan.Hide) == 0 {
		return nil
	}
	keep := append(append([]string{plan.Command}, plan.Read...), plan.Write...)
	for _, h := range plan.Hide {
		if slices.Contains(keep, h) {
			continue
		}
		var inside []string
		for _, k := range keep {
			if within(k, h) && k != h {
				inside = append(inside, k)
			}
		}
		inside = compactRoots(inside)
		fds := make([]int, len(inside))
		for i, k := range inside {
			fd, err := unix.Open(k, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				fd = -1 // a granted root that is gone stays gone
			}
			fds[i] = fd
		}
		if err := unix.Mount("tmpfs", h, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64k"); err != nil {
			return fmt.Errorf("hide %s: %w", h, err)
		}
		for i, k := range inside {
			if fds[i] < 0 {
				continue
			}
			var st unix.Stat_t
			if err := unix.Fstat(fds[i], &st); err != nil {
				return fmt.Errorf("keep %s: %w", k, err)
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				if err := os.MkdirAll(k, 0o755); err != nil {
					return fmt.Errorf("keep %s: %w", k, err)
				}
			} else {
				if err := os.MkdirAll(filepath.Dir(k), 0o755); err != nil {
					return fmt.Errorf("keep %s: %w", k, err)
				}
				f, err := os.OpenFile(k, os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					return fmt.Errorf("keep %s: %w", k, err)
				}
				f.Close()
			}
			if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fds[i]), k, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("keep %s: %w", k, err)
			}
			unix.Close(fds[i])
		}
	}
	return nil
}

// reenter enters the working folder wd again, through the mounts as they are now.
func reenter(plan *Plan, wd string) error {
	if err := os.Chdir(wd); err != nil {
		// The working folder is not in the sandbox: start in the server's own folder (it could
		// read nothing where it was) and say so.
		own := filepath.Dir(plan.TempDir)
		fmt.Fprintf(os.Stderr, "sandbox: the working folder %s is outside the sandbox; the server starts in its own folder\n", wd)
		if err := os.Chdir(own); err != nil {
			return fmt.Errorf("working folder %s: %w", own, err)
		}
	}
	return nil
}

// fixCode binds the plan's Fixed paths read-only over themselves, its Anchors over themselves,
// and its Reopen folders writable over a fixed one, shallowest first so that a deeper mount lands
// on the one above it. Every bind is of the path as it was before the first (opened beforehand),
// so a reopened folder is the writable original, not a copy of the read-only mount above it.
// Landlock keeps the server from unmounting any of them, and a mount point can be neither
// removed nor renamed, nor renamed over. A path that does not exist is left: a mount needs
// something to mount on, and making a placeholder would change the user's folder.
func fixCode(plan *Plan) error {
	type bind struct {
		path     string
		fd       int
		readOnly bool
	}
	var binds []bind
	var linkErr error
	add := func(paths []string, readOnly bool) {
		for _, p := range paths {
			fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue // not there: nothing to keep (see the README)
			}
			binds = append(binds, bind{p, fd, readOnly})
			// Resolve refused links; one made since would take the mount to what it names and
			// leave the link replaceable.
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
				linkErr = fmt.Errorf("keep %s read-only: it is a symbolic link now", p)
			}
		}
	}
	add(plan.Anchors, false)
	add(plan.Fixed, true)
	add(plan.Reopen, false)
	defer func() {
		for _, b := range binds {
			unix.Close(b.fd)
		}
	}()
	if linkErr != nil {
		return linkErr
	}
	depth := func(p string) int { return strings.Count(filepath.Clean(p), "/") }
	slices.SortStableFunc(binds, func(a, b bind) int { return depth(a.path) - depth(b.path) })
	for _, b := range binds {
		// The path as it is seen now (on the mount above it, if any), the original beneath it.
		if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(b.fd), b.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("keep %s: %w", b.path, err)
		}
		if !b.readOnly {
			continue
		}
		if err := remountReadOnly(b.path); err != nil {
			return fmt.Errorf("keep %s read-only: %w", b.path, err)
		}
	}
	return nil
}

// coverSecrets binds an empty read-only file over each of the plan's Secrets, so the server reads
// them empty and cannot write them; Landlock keeps it from unmounting them, and a mount point can
// be neither removed nor renamed. The empty file is made anew in the server's state folder (which
// the server writes: whatever it left there, a link to a secret above all, is removed, and the new
// file is made where nothing is, never followed) and bound from its descriptor. A secret that is a
// symbolic link now (Resolve covered where one led) stops the start; one gone since is left.
func coverSecrets(plan *Plan) error {
	if len(plan.Secrets) == 0 {
		return nil
	}
	// Whatever is there was left by the server (its own folder): a folder too.
	if err := os.RemoveAll(plan.Empty); err != nil {
		return fmt.Errorf("cover the workspace's secrets: %s: %w", plan.Empty, err)
	}
	empty, err := unix.Open(plan.Empty, unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0o444)
	if err != nil {
		return fmt.Errorf("cover the workspace's secrets: %s: %w", plan.Empty, err)
	}
	defer unix.Close(empty)
	for _, p := range plan.Secrets {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // gone since: nothing to cover
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		unix.Close(fd)
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return fmt.Errorf("cover %s: it is no longer a plain file", p)
		}
		if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(empty), p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("cover %s: %w", p, err)
		}
		if err := remountReadOnly(p); err != nil {
			return fmt.Errorf("cover %s: %w", p, err)
		}
	}
	return nil
}

// remountReadOnly makes the bind mount at path read-only, keeping the flags it was made with
// (nosuid, nodev, ... are locked in a user namespace).
func remountReadOnly(path string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
	for _, f := range []struct{ st, ms uintptr }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f.st != 0 {
			flags |= f.ms
		}
	}
	return unix.Mount("", path, "", flags, "")
}

func fsRule(p string, write bool) landlock.Rule {
	dir := true
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		dir = false
	}
	switch {
	case write && dir:
		return landlock.RWDirs(p).WithRefer().IgnoreIfMissing()
	case write:
		return landlock.RWFiles(p).IgnoreIfMissing()
	case dir:
		return landlock.RODirs(p).IgnoreIfMissing()
	default:
		return landlock.ROFiles(p).IgnoreIfMissing()
	}
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// proxyListener listens on loopback inside the namespace and passes the socket to the host,
// which serves its proxy on it: the server's only way out is a connection the host accepts.
func proxyListener(status *os.File) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return 0, err
	}
	if err := unix.Listen(fd, 128); err != nil {
		return 0, err
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, err
	}
	port := sa.(*unix.SockaddrInet4).Port
	if err := unix.Sendmsg(int(status.Fd()), []byte("L"), unix.UnixRights(fd), nil, 0); err != nil {
		return 0, err
	}
	return port, nil
}

// Available reports whether this kernel can run a sandboxed server, and if not, why.
func Available() error { return available(minABI) }

func available(need int) error {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < need {
		have := "no Landlock"
		if err == nil {
			have = "Landlock ABI " + strconv.Itoa(v)
		}
		return fmt.Errorf("sandbox: this kernel has %s; a sandboxed server needs Landlock ABI %d or later (Linux 6.12+)", have, need)
	}
	return nil
}
