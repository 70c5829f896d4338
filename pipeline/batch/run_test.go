package batch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/store"
	"github.com/verifymcp/verifymcp/supplychain"
)

// fakeResolver resolves npm:NAME@VERSION to itself, after delay; the name
// "missing" is not found. It counts the lookups begun and the most in
// flight at once.
type fakeResolver struct {
	delay time.Duration
	// slow, when set, names the targets that take an hour instead.
	slow     func(pipeline.Target) bool
	begun    atomic.Int32
	inFlight atomic.Int32
	maxIn    atomic.Int32
}

func (f *fakeResolver) Resolve(ctx context.Context, t pipeline.Target) (*pipeline.Resolved, error) {
	f.begun.Add(1)
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxIn.Load()
		if n <= m || f.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	d := f.delay
	if f.slow != nil && f.slow(t) {
		d = time.Hour
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if t.Name == "missing" {
		return nil, fmt.Errorf("%w: %s", supplychain.ErrPackageNotFound, t.Name)
	}
	return &pipeline.Resolved{Target: t, Name: t.Name, Version: t.Spec, Integrity: "sha512-" + t.Name + t.Spec}, nil
}

// fakeStore holds one stored run, for the package named "stored".
type fakeStore struct{}

func (fakeStore) ResumeFind(ctx context.Context, k store.ResumeKey) (store.ResumeRun, error) {
	if k.Name == "stored" {
		return store.ResumeRun{RunID: "r-stored", Outcome: "ok"}, nil
	}
	return store.ResumeRun{}, store.ErrNotFound
}

func npmItems(names ...string) []*Item {
	lines := make([]Line, len(names))
	for i, n := range names {
		lines[i] = Line{Line: i + 1, Target: pipeline.Target{Raw: "npm:" + n + "@1.0.0", Ecosystem: "npm", Name: n, Spec: "1.0.0"}}
	}
	return NewItems(lines)
}

// TestResolveHandsOutInFileOrder: the items left to scan reach next in
// file order, each with its artefact; a target that does not resolve
// fails, a repeat and a stored one skip, and done sees those in file
// order too, without their artefacts.
func TestResolveHandsOutInFileOrder(t *testing.T) {
	names := []string{"a", "missing", "b", "a", "stored", "c"}
	for i := range 30 {
		names = append(names, fmt.Sprintf("p%02d", i))
	}
	items := npmItems(names...)
	r := &fakeResolver{delay: time.Millisecond}
	var order, done []int
	err := Resolve(context.Background(), r, fakeStore{}, "0.9.0", "7", items, false, func(it *Item) { done = append(done, it.Line) }, func(it *Item) bool {
		if it.Resolved == nil {
			t.Errorf("line %d handed out without its artefact", it.Line)
		}
		order = append(order, it.Line)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1, 3, 6}
	for i := 7; i <= len(names); i++ {
		want = append(want, i)
	}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("handed out (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2, 4, 5}, done); diff != "" {
		t.Errorf("done (-want +got):\n%s", diff)
	}
	if it := items[1]; it.Status != StatusFailed || it.Outcome != "not_found" {
		t.Errorf("missing: %+v", it)
	}
	if it := items[3]; it.Status != StatusSkipped || it.SkipReason != "duplicate of line 1" || it.Resolved != nil {
		t.Errorf("repeat: %+v", it)
	}
	if it := items[4]; it.Status != StatusSkipped || it.SkipReason != "stored" || it.RunID != "r-stored" || it.Resolved != nil {
		t.Errorf("stored: %+v", it)
	}
	if m := r.maxIn.Load(); m > resolveConcurrency {
		t.Errorf("%d lookups at once, want at most %d", m, resolveConcurrency)
	}

	// With rescan, the stored one is handed out as well.
	items = npmItems("stored", "b")
	order = nil
	if err := Resolve(context.Background(), r, fakeStore{}, "0.9.0", "7", items, true, func(*Item) {}, func(it *Item) bool {
		order = append(order, it.Line)
		return true
	}); err != nil || !cmp.Equal([]int{1, 2}, order) {
		t.Errorf("rescan: handed out %v, %v", order, err)
	}
}

// TestResolveBoundedAhead: while next is busy with the first item, the
// lookups go at most lookahead items ahead of it, whatever the list's
// length; and the first item is handed out before the last lookup.
func TestResolveBoundedAhead(t *testing.T) {
	names := make([]string, 200)
	for i := range names {
		names[i] = fmt.Sprintf("p%03d", i)
	}
	items := npmItems(names...)
	r := &fakeResolver{delay: time.Millisecond}
	var aheadAtFirst, aheadMax int32
	err := Resolve(context.Background(), r, fakeStore{}, "0.9.0", "7", items, false, func(*Item) {}, func(it *Item) bool {
		if it.Line == 1 {
			aheadAtFirst = r.begun.Load()
			time.Sleep(200 * time.Millisecond) // a busy worker pool
		}
		aheadMax = max(aheadMax, r.begun.Load()-int32(it.Line))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if aheadAtFirst >= int32(len(names)) {
		t.Errorf("the first item waited for all %d lookups", aheadAtFirst)
	}
	if aheadMax > lookahead {
		t.Errorf("lookups went %d items ahead of the one handed out, want at most %d", aheadMax, lookahead)
	}
	if got := r.begun.Load(); got != int32(len(names)) {
		t.Errorf("%d lookups, want %d", got, len(names))
	}
}

// TestResolveStops: when next says no, nothing after that item is looked
// up beyond the window already begun or handed out, the lookups in flight
// are cut short (here they would take an hour), those items keep no
// status, and Resolve returns only once its lookups are over.
func TestResolveStops(t *testing.T) {
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("p%03d", i)
	}
	items := npmItems(names...)
	r := &fakeResolver{delay: 5 * time.Millisecond, slow: func(t pipeline.Target) bool { return t.Name >= "p003" }}
	var handed []int
	begin := time.Now()
	err := Resolve(context.Background(), r, fakeStore{}, "0.9.0", "7", items, false, func(*Item) {}, func(it *Item) bool {
		handed = append(handed, it.Line)
		return it.Line < 3
	})
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal([]int{1, 2, 3}, handed) {
		t.Errorf("handed out %v, want lines 1 to 3", handed)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("Resolve took %s to stop: its lookups in flight were waited for, not cut short", d)
	}
	if n := r.inFlight.Load(); n != 0 {
		t.Errorf("Resolve returned with %d lookups in flight", n)
	}
	if b := r.begun.Load(); b > 3+lookahead {
		t.Errorf("%d lookups begun, want at most %d", b, 3+lookahead)
	}
	for _, it := range items[3:] {
		if it.Status != "" {
			t.Errorf("line %d: status %q after the stop", it.Line, it.Status)
		}
	}
}

// TestResolveCancelled: a cancelled batch returns the context's error,
// and a lookup cut short by it is not the target's failure.
func TestResolveCancelled(t *testing.T) {
	items := npmItems("a", "b", "c")
	r := &fakeResolver{delay: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	var mu sync.Mutex
	var done []int
	err := Resolve(ctx, r, fakeStore{}, "0.9.0", "7", items, false, func(it *Item) {
		mu.Lock()
		done = append(done, it.Line)
		mu.Unlock()
	}, func(*Item) bool { return true })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	for _, it := range items {
		if it.Status != "" {
			t.Errorf("line %d: status %q, want none (not started)", it.Line, it.Status)
		}
	}
	if len(done) != 0 {
		t.Errorf("done called for %v", done)
	}
}
