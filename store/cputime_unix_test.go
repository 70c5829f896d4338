//go:build unix

package store

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// syncDisks writes every dirty page to disk, so that a benchmark does not
// measure the kernel writing back what its set-up wrote.
func syncDisks() { syscall.Sync() }
