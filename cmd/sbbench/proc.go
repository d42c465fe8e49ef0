package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// statusKB reads one "Key:   N kB" field of /proc/PID/status, in KiB (0 when unreadable).
func statusKB(pid int, key string) int64 {
	return statusNumber(fmt.Sprintf("/proc/%d/status", pid), key)
}

// statusNumber reads the number of one "Key:   N [kB]" field of a status file (0 when unreadable).
func statusNumber(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			return 0
		}
		n, _ := strconv.ParseInt(fields[0], 10, 64)
		return n
	}
	return 0
}

// descendants returns pid and every process below it (by parent pid), pid first.
func descendants(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// comm may contain spaces and parens: the fields after the last ')' are fixed.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// rssTree is the summed VmRSS (KiB) of pid and all its descendants, and how many processes.
func rssTree(pid int) (kb int64, procs int) {
	for _, p := range descendants(pid) {
		kb += statusKB(p, "VmRSS")
		procs++
	}
	return kb, procs
}

// cpuUse is what a process's threads have used so far: CPU time (from each thread's
// /proc/PID/task/TID/schedstat, in nanoseconds) and context switches (voluntary and not, from
// each thread's status). Threads that ended are not counted (Go keeps its threads).
type cpuUse struct {
	ns       int64
	switches int64
}

func processCPU(pid int) (cpuUse, bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return cpuUse{}, false
	}
	var u cpuUse
	for _, t := range tasks {
		dir := fmt.Sprintf("/proc/%d/task/%s/", pid, t.Name())
		if b, err := os.ReadFile(dir + "schedstat"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				u.ns += n
			}
		}
		u.switches += statusNumber(dir+"status", "voluntary_ctxt_switches") + statusNumber(dir+"status", "nonvoluntary_ctxt_switches")
	}
	return u, true
}
