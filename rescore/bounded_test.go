package rescore

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

// watchedStore is a store of n runs made on the fly (the mix of mixed,
// cycled) that counts the runs a pass holds: read by EachRun and not yet
// reported done by Options.Progress. Its bytes are valid only until fn
// returns, as EachRun's are: one buffer is overwritten for every run.
type watchedStore struct {
	n       int
	bundles [][]byte
	// saveDelay slows SaveResults down, so that a pass that did not bound
	// what it reads ahead of its writer would hold ever more runs.
	saveDelay time.Duration

	read, done atomic.Int64
	mu         sync.Mutex
	max        int64 // most runs held at once
	saved      int
}

func (w *watchedStore) CountRuns(context.Context, store.Filter) (int, error) { return w.n, nil }

func (w *watchedStore) EachRun(ctx context.Context, _ store.Filter, _, _ string, fn func(*store.StoredRun) error) error {
	var buf []byte
	for i := range w.n {
		buf = append(buf[:0], w.bundles[i%len(w.bundles)]...)
		held := w.read.Add(1) - w.done.Load()
		w.mu.Lock()
		w.max = max(w.max, held)
		w.mu.Unlock()
		if err := fn(&store.StoredRun{ID: fmt.Sprintf("run-%06d", i), Bundle: buf}); err != nil {
			return err
		}
		clear(buf) // the pass must have copied what it keeps
	}
	return ctx.Err()
}

func (w *watchedStore) SaveResults(_ context.Context, rs []store.Result) error {
	time.Sleep(w.saveDelay)
	w.mu.Lock()
	w.saved += len(rs)
	w.mu.Unlock()
	return nil
}

// TestRescoreHoldsBoundedRuns runs passes over stores far larger than
// maxInFlight, with a slow writer, and checks that no more runs than it
// allows were ever read and not yet committed: the reader, the workers
// and the writer hold a bounded number of runs, whatever the store's size.
func TestRescoreHoldsBoundedRuns(t *testing.T) {
	fx := loadRescoreFixtures(t)
	var bundles [][]byte
	for i := range 16 {
		data, err := json.Marshal(fx.mixed(i))
		if err != nil {
			t.Fatal(err)
		}
		bundles = append(bundles, data)
	}
	const workers, batch = 2, 100
	bound := maxInFlight(workers, batch)
	n := 4 * bound
	if testing.Short() {
		n = 2 * bound
	}
	for _, save := range []bool{false, true} {
		t.Run(fmt.Sprintf("save=%v", save), func(t *testing.T) {
			w := &watchedStore{n: n, bundles: bundles, saveDelay: 5 * time.Millisecond}
			sum, err := run(context.Background(), w, Options{Rubric: rubric.Current(), Workers: workers, BatchSize: batch, Save: save,
				Progress: func(done, total int) { w.done.Store(int64(done)) }})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Rescored != n || len(sum.Failed) != 0 {
				t.Fatalf("rescored %d of %d, %d failed (first: %v)", sum.Rescored, n, len(sum.Failed), sum.Failed)
			}
			if save && w.saved != n {
				t.Errorf("saved %d results, want %d", w.saved, n)
			}
			t.Logf("%d runs, at most %d held at once (bound %d)", n, w.max, bound)
			if w.max > int64(bound) {
				t.Errorf("the pass held %d runs at once, more than maxInFlight's %d: what it holds grows with the store", w.max, bound)
			}
		})
	}
}

// TestRecycleDropsLargeBuffers checks that a batch returned to the pool
// keeps the buffers of ordinary runs and drops those of huge ones.
func TestRecycleDropsLargeBuffers(t *testing.T) {
	batch := []row{
		{runID: "small", bundle: make([]byte, 10<<10), baseline: make([]byte, 1<<10)},
		{runID: "huge", bundle: make([]byte, maxPooledBuffer+1), baseline: make([]byte, maxPooledBuffer+1)},
	}
	got := recycle(batch)
	if len(got) != 0 || cap(got) != 2 {
		t.Fatalf("recycle gave len %d cap %d, want an empty batch of capacity 2", len(got), cap(got))
	}
	got = got[:2]
	if cap(got[0].bundle) != 10<<10 || cap(got[0].baseline) != 1<<10 {
		t.Errorf("the small run's buffers were dropped: caps %d, %d", cap(got[0].bundle), cap(got[0].baseline))
	}
	if got[1].bundle != nil || got[1].baseline != nil {
		t.Errorf("the huge run's buffers were kept: caps %d, %d", cap(got[1].bundle), cap(got[1].baseline))
	}
}
