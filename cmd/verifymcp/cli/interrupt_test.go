package cli

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

func closedWithin(c <-chan struct{}, d time.Duration) bool {
	select {
	case <-c:
		return true
	case <-time.After(d):
		return false
	}
}

// TestTwoStage: the first SIGINT, which ends the command's context and
// reaches the watch too, counts once: it stops new work and leaves the
// scans' context alone; the second abandons them.
func TestTwoStage(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	firsts, seconds := 0, 0
	hard, firstC, stop := twoStage(ctx, func(func()) { firsts++ }, func() { seconds++ })
	defer stop()

	cancel()                                                          // Run's signal context ends on the first SIGINT ...
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil { // ... which the watch gets as well
		t.Fatal(err)
	}
	if !closedWithin(firstC, 5*time.Second) {
		t.Fatal("the first interrupt did not close the channel")
	}
	if closedWithin(hard.Done(), 300*time.Millisecond) {
		t.Fatal("the first interrupt abandoned the scans")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(hard.Done(), 5*time.Second) {
		t.Fatal("the second interrupt did not abandon the scans")
	}
	if firsts != 1 || seconds != 1 {
		t.Errorf("first called %d times, second %d", firsts, seconds)
	}
}

// TestTwoStageAbandonAtOnce: with nothing in flight, the first interrupt
// may abandon at once.
func TestTwoStageAbandonAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	hard, _, stop := twoStage(ctx, func(abandon func()) { abandon() }, nil)
	defer stop()
	cancel()
	if !closedWithin(hard.Done(), 5*time.Second) {
		t.Fatal("abandon did not cancel the scans' context")
	}
}
