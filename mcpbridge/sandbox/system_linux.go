package sandbox

// systemRead are the folders every process needs to run: read (and execute) only.
var systemRead = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/proc", "/sys", "/nix/store", "/snap", "/run/current-system",
}
