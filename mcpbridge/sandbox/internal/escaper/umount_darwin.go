package main

import "syscall"

func unmount(path string) error { return syscall.Unmount(path, 0) }
