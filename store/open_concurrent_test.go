package store

import (
	"context"
	"sync"
	"testing"

	"github.com/verifymcp/verifymcp/cache"
)

// TestConcurrentOpenOfANewDirectory: processes started together on a new
// data directory (a batch and its workers, CI jobs sharing one) each open
// the store and the cache, which share its database file. Every open must
// succeed: a new file's first connections switch it to WAL under a lock
// SQLite does not wait for, and one that meets it is opened again.
func TestConcurrentOpenOfANewDirectory(t *testing.T) {
	ctx := context.Background()
	for round := range 20 {
		dir := t.TempDir()
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					s, err := Open(ctx, dir)
					if err != nil {
						errs <- err
						return
					}
					errs <- s.Close()
					return
				}
				c, err := cache.Open(ctx, dir)
				if err != nil {
					errs <- err
					return
				}
				errs <- c.Close()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
