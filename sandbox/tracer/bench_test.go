//go:build linux

package tracer

import (
	"io"
	"os/exec"
	"testing"
	"time"
)

// loop200 runs /bin/true 200 times once released by a line on stdin.
var loop200 = []string{"/bin/sh", "-c", `read -r _; i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done`}

// BenchmarkExec200 measures the wall time of a shell running /bin/true 200
// times, without and with the tracer attached (start-up and attach are not
// timed). The difference per exec is the tracer's overhead; tracer-cpu-ms
// is the CPU time the tracer process used per 200 execs.
func BenchmarkExec200(b *testing.B) {
	b.Run("untraced", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			cmd := exec.Command(loop200[0], loop200[1:]...)
			in, err := cmd.StdinPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			_, _ = io.WriteString(in, "\n")
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/200, "µs/exec")
	})
	b.Run("traced", func(b *testing.B) {
		var tracerCPU time.Duration
		for b.Loop() {
			b.StopTimer()
			s := startTarget(b, loop200)
			b.StartTimer()
			s.releaseTarget()
			if code := s.waitTarget(time.Minute); code != 0 {
				b.Fatalf("target exited %d", code)
			}
			b.StopTimer()
			evs := s.waitTracer(time.Minute)
			if n := len(execs(evs)); n != 200 {
				b.Fatalf("%d execs recorded, want 200", n)
			}
			tracerCPU += s.tracer.ProcessState.UserTime() + s.tracer.ProcessState.SystemTime()
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/200, "µs/exec")
		b.ReportMetric(float64(tracerCPU.Microseconds())/1000/float64(b.N), "tracer-cpu-ms/op")
	})
}
