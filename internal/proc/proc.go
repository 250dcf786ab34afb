// Package proc reads Linux's /proc for the tools and tests that watch fuzzls's
// processes from outside (bench/latency, bench/faults, the daemon's tests): a
// process's CPU time, resident memory and start, its children and all its
// descendants, and whether it still runs.
package proc

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/pid/stat's times (USER_HZ is 100 on Linux).
const clockTick = 10 * time.Millisecond

// Fields returns the fields of /proc/pid/stat after the command name: [0] is
// the state, [1] the parent's pid.
func Fields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || len(strings.Fields(s[i+1:])) < 20 {
		return nil, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return strings.Fields(s[i+1:]), nil
}

// CPU is utime+stime of pid (fields 14 and 15 of stat).
func CPU(pid int) (time.Duration, error) {
	f, err := Fields(pid)
	if err != nil {
		return 0, err
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * clockTick, nil
}

// RSS is pid's resident memory in bytes (VmRSS of /proc/pid/status).
func RSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// Start is when pid started (field 22 of stat: ticks since boot), as wall time
// (10 ms resolution).
func Start(pid int) (time.Time, error) {
	f, err := Fields(pid)
	if err != nil {
		return time.Time{}, err
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	data, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Time{}, err
	}
	now := time.Now()
	up, err := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	if err != nil {
		return time.Time{}, err
	}
	boot := now.Add(-time.Duration(up * float64(time.Second)))
	return boot.Add(time.Duration(ticks) * clockTick), nil
}

// Alive says whether pid runs: it exists and is not a zombie.
func Alive(pid int) bool {
	f, err := Fields(pid)
	return err == nil && f[0] != "Z"
}

// Name is the command name of pid (stat's second field), "" if it is gone.
func Name(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(data)
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return ""
	}
	return s[i+1 : j]
}

// Exe is the path of pid's executable ("" if it is gone or not readable),
// without the " (deleted)" Linux adds when the file was replaced.
func Exe(pid int) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(p, " (deleted)")
}

// parents maps every running (not zombie) process to its parent.
func parents() map[int]int {
	out := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := Fields(n)
		if err != nil || f[0] == "Z" {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			out[n] = ppid
		}
	}
	return out
}

// Children lists the running (not zombie) children of pid.
func Children(pid int) []int {
	var out []int
	for n, ppid := range parents() {
		if ppid == pid {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// Descendants lists the running (not zombie) descendants of pid, children,
// their children and so on, in one reading of /proc.
func Descendants(pid int) []int {
	kids := map[int][]int{}
	for n, ppid := range parents() {
		kids[ppid] = append(kids[ppid], n)
	}
	var out []int
	todo := []int{pid}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		out = append(out, kids[p]...)
		todo = append(todo, kids[p]...)
	}
	sort.Ints(out)
	return out
}
