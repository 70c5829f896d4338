package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// twoStage is the interrupt of a command that runs many scans (batch,
// worker). The first interrupt (ctx ending, which is Run's signal
// context, or a SIGINT or SIGTERM) calls first once and closes the
// returned channel: the command starts nothing new and lets what runs
// finish. The second SIGINT or SIGTERM calls second and cancels hard, the
// context the command's scans run under, which abandons them; first may
// do so at once by calling its argument (nothing was in flight). stop
// ends the watch.
//
// The first SIGINT reaches both ctx and this watch; it counts once.
func twoStage(ctx context.Context, first func(abandon func()), second func()) (hard context.Context, firstC <-chan struct{}, stop func()) {
	hard, abandon := context.WithCancel(context.WithoutCancel(ctx))
	sigC := make(chan os.Signal, 4)
	signal.Notify(sigC, os.Interrupt, syscall.SIGTERM)
	fc := make(chan struct{})
	once := sync.OnceFunc(func() {
		close(fc)
		if first != nil {
			first(abandon)
		}
	})
	done := make(chan struct{})
	go func() {
		n := 0
		parentDone := ctx.Done()
		for {
			select {
			case <-parentDone:
				once()
				parentDone = nil // seen; wait for signals only
			case <-sigC:
				n++
				once()
				if n == 2 {
					if second != nil {
						second()
					}
					abandon()
				}
			case <-done:
				return
			}
		}
	}()
	stop = sync.OnceFunc(func() {
		signal.Stop(sigC)
		close(done)
		abandon()
	})
	return hard, fc, stop
}
