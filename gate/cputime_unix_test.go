//go:build unix

package gate

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time. Benchmarks report it per
// operation beside wall time because the build machine is shared: wall
// time there measures the neighbours as much as the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
