//go:build !linux && !darwin

package sandbox

var systemRead = []string{"/usr", "/bin", "/sbin", "/lib", "/etc", "/opt"}
