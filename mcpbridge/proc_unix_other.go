//go:build unix && !linux

package mcpbridge

func groupAlive(pgid int) bool { return groupAliveByKill(pgid) }
