package sandbox

// systemRead are the folders every process needs to run: read (and execute) only. /etc, /tmp
// and /var are links into /private; Resolve follows them.
var systemRead = []string{
	"/usr", "/bin", "/sbin", "/System", "/Library", "/opt/homebrew", "/opt/local", "/etc",
	"/private/var/db/timezone", "/Applications/Xcode.app", "/Library/Developer/CommandLineTools",
	"/nix/store",
}
