//go:build linux && !race

package rawio

func released() {}
func acquired() {}
