// Package sandbox confines a local (stdio) MCP server to what its profile allows, so "what can
// this server touch" has an answer the user saw.
//
// A [Profile] is the config entry's "sandbox" field (`true`, or {"read", "write", "network"});
// [Profile.Canonical] is its form in the trust fingerprint and [Profile.Describe] the sentence a
// person sees ("sandboxed: no network, writes only ./build and its own folder"). [Resolve] turns
// it into a [Plan] of concrete roots: the system folders, the command's own package, the package
// managers' caches and the workspace read-only; the server's own state folder (with a private
// temp) writable; whatever the entry lists. Never granted, whatever the entry says: the user's
// secrets (~/.ssh, ~/.gnupg, ~/.aws, ~/.netrc, keyrings, ...), Switchboard's own state (tokens,
// allowlist, pins, audit) and other servers' state folders. Landlock allows by root, so no
// granted root may contain one of them: a default root that does (a workspace that is the home
// folder) is granted child by child without it; a path the user listed that does is refused with
// an error naming the secret.
//
// # What runs code stays read-only
//
// Inside a folder the entry lists under "write", the paths that make git, an editor, a shell or
// an agent run code outside the sandbox later, or change which servers run ([RunsCode]: .git,
// .vscode, .envrc, .mcp.json, ..., and the .git of each folder right inside), stay read-only unless the entry lists them by name, and then
// [Profile.Describe] names them apart. Landlock only grants, and a grant of a folder is a grant of
// every name that may ever be made in it, so on Linux the launcher binds each such path that
// exists read-only over itself after its other mounts ([Plan.Fixed]); a mount point can be
// neither removed nor renamed, nor renamed over, and the folders between ([Plan.Anchors]) are
// bound over themselves so they cannot be moved away either. A path that does not exist at start
// is not covered (a mount needs something to mount on; a placeholder would change the user's
// folder). macOS's profile denies them by path, there or not.
//
// The dotenv files of the workspace folders and the listed ones, down to three folders, that the
// entry does not list by name ([Plan.Secrets]) are covered on Linux by an empty read-only file,
// made anew in the server's state folder at each start and bound from its descriptor; macOS's
// profile denies them.
//
// # Linux
//
// [Wrap] turns the server's exec.Cmd into a start of the host's own executable, whose first act
// ([Main], called at the top of cmd/switchboard's main and of test binaries' TestMain) is to
// confine itself and then start the server. Landlock (ABI 6 or later, required, never best
// effort) restricts files, TCP connect/bind and signals/abstract sockets to outside the sandbox;
// the launcher also sets no_new_privs. The launcher starts in new user, mount and PID namespaces,
// and unless the network is "true" a network namespace: "no network" is a namespace with only its
// own loopback. A domain list is served by a proxy in the host: the launcher listens on loopback
// inside the namespace, hands that socket to the host over its status socket (SCM_RIGHTS), allows
// itself TCP connect to that one port only, and starts the server with HTTP(S)_PROXY pointing
// there. The proxy allows CONNECT
// and plain HTTP to listed names only. Landlock and namespaces are inherited by every descendant
// and cannot be left, so setsid, double forks and exec change nothing.
//
// Where the kernel lacks what a sandbox needs, the launcher refuses to start the server and says
// why ([Sandbox.Started] returns it); it never runs a server unconfined. The launcher runs with
// none of the server's environment (an entry's LD_PRELOAD would otherwise load code into it
// before the sandbox is in force); the server gets it at exec.
//
// # What a person sees when the sandbox bites
//
// A refused connection through the proxy is reported through [Options.Report] as one sentence
// ("blocked: connection to evil.example.com:443 (not on the server's network list)"). Landlock
// refuses file access with EACCES and tells the process nothing more. The kernel can log each
// refusal to the audit subsystem (ABI 7; the launcher asks for it after exec), but only where
// audit is enabled and read with CAP_AUDIT_READ, which the host neither has nor should want (on
// this machine audit is off: nothing arrives). So the server's own error is where the path is
// named, and [Plan.Explain] turns such a stderr line (Node, Python, Go and C tools' forms) into
// "blocked: read of ~/.ssh/id_rsa (never open to a sandboxed server)" when the plan is why.
//
// # macOS
//
// The darwin build runs the server under sandbox-exec with a generated profile (profile_darwin.go).
//
// # Unix sockets
//
// Before Landlock ABI 9, connect(2) to a pathname Unix socket is not checked: a server could talk
// to an ssh-agent, a gpg-agent or a docker socket whose path it knows. So the launcher (in its own
// user and mount namespaces) covers /tmp, /var/tmp, /run, /dev/shm, $XDG_RUNTIME_DIR, the home
// folder and every secret folder with an empty tmpfs and mounts the granted roots back inside;
// what is not granted there is not found (the server sees "no such file", which [Plan.Explain]
// turns into "blocked: ..." when the host sees the file). A socket inside a granted root stays
// reachable.
//
// # Processes
//
// The launcher is its PID namespace's init and mounts that namespace's /proc over the host's, so
// the server sees its own process tree only, never another process's command line (an
// unsandboxed server started with --token). The launcher does not exec the server: it starts it,
// passes on the signals the host sends it (init gets only the signals it handles), reaps the
// orphans that the namespace gives it, and exits with the server's status once the server has
// exited (128 plus the signal that killed it: init cannot die of its own signal). Its exit, or a
// SIGKILL, ends every process left in the namespace, setsid ones included, before the host
// reaps it. The launcher forwards signals from the thread that started the server: Landlock
// (before ABI 8) confined each thread on its own, and its signal scope lets a thread signal only
// its own domain's processes.
//
// # Limits
//
// Inside a CONNECT tunnel the server speaks TLS to whatever answers at the listed name: the list
// is of names, not of what a shared front server routes to. On Linux a server granted a folder
// can create a code-running path that was not there at start (.envrc, .vscode/, .git in a folder
// that was not a repository). Where /proc cannot be mounted afresh
// (a container that masks parts of the host's /proc), a sandboxed server does not start.
package sandbox
