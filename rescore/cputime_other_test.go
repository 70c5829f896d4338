//go:build !unix

package rescore

import "time"

// cpuTime is not measured on this platform.
func cpuTime() time.Duration { return 0 }

func syncDisks() {}

func serverCPUTime() time.Duration { return 0 }

func resetPeakRSS() {}

func peakRSS() int64 { return 0 }
