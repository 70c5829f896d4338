package batch

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/pipeline"
)

// TestJobs: one job per target, keyed by the exact version (or the
// tarball's path and digest); a second line with the same target and
// other options fails as bad input in its own words; the totals add up.
func TestJobs(t *testing.T) {
	reg := func(line int, args ...string) *Item {
		return &Item{Line: line, Spec: Line{Args: args}, Resolved: &pipeline.Resolved{Name: "left-pad", Version: "1.3.0", Integrity: "sha512-x", Source: "registry"}}
	}
	file := &Item{Line: 3, Resolved: &pipeline.Resolved{Target: pipeline.Target{File: "/srv/a.tgz"}, Integrity: "sha512-y", Source: "file"}}
	py := &Item{Line: 5, Resolved: &pipeline.Resolved{Target: pipeline.Target{Ecosystem: "pypi", Name: "mcp-server-time"}, Name: "mcp-server-time", Version: "2025.9.25", Source: "registry"}}
	skipped := &Item{Line: 4, Status: StatusSkipped}
	todo := []*Item{reg(1), reg(2, "--verbose"), file, py}
	var done []int
	l := NewJobList("0.9.0", "7")
	for _, it := range todo {
		if err := l.Add(it); err != nil {
			t.Fatal(err)
		}
		if it.Resolved != nil {
			t.Errorf("line %d: the job list kept its resolved artefact", it.Line)
		}
		done = append(done, it.Line)
	}
	jobs := l.Jobs
	var targets []string
	for _, j := range jobs {
		targets = append(targets, j.Target)
		if j.ToolVersion != "0.9.0" || j.RubricVersion != "7" {
			t.Errorf("job %s keyed by tool %s, rubric %s", j.Target, j.ToolVersion, j.RubricVersion)
		}
	}
	if diff := cmp.Diff([]string{"npm:left-pad@1.3.0", "/srv/a.tgz#sha512-y", "pypi:mcp-server-time==2025.9.25"}, targets); diff != "" {
		t.Errorf("job targets (-want +got):\n%s", diff)
	}
	if SplitJobTarget(targets[1]) != "/srv/a.tgz" {
		t.Errorf("SplitJobTarget(%q) = %q", targets[1], SplitJobTarget(targets[1]))
	}
	var o JobOptions
	if err := json.Unmarshal(jobs[0].Options, &o); err != nil || o.Integrity != "sha512-x" {
		t.Errorf("job options %s: %v", jobs[0].Options, err)
	}
	if tg, err := pipeline.ParseTarget(targets[2]); err != nil || tg.Ecosystem != "pypi" || tg.Name != "mcp-server-time" || tg.Spec != "==2025.9.25" {
		t.Errorf("the PyPI job's target %q parses to %+v, %v", targets[2], tg, err)
	}
	if diff := cmp.Diff([]int{1, 2, 3, 5}, done); diff != "" {
		t.Errorf("done (-want +got):\n%s", diff)
	}
	v := todo[1]
	if v.Status != StatusFailed || !errors.Is(v.Err, ErrVariant) || !strings.HasPrefix(v.Error, "line 1 enqueues npm:left-pad@1.3.0 with other") || v.Outcome != "error" {
		t.Errorf("variant: %+v", v)
	}

	s := EnqueueSummary{Targets: append(todo, skipped)}
	CountEnqueued(&s, 2, 1)
	if diff := cmp.Diff(EnqueueTotals{Targets: 5, Submitted: 3, Enqueued: 2, AlreadyQueued: 1, Skipped: 1, Failed: 1}, s.Totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
}

// TestWorkerPace: a worker's first Concurrency scans start spread over
// Scans.Spread, one every Spread/Concurrency, not at once; later ones
// start at once.
func TestWorkerPace(t *testing.T) {
	w := &Worker{Scans: &Scans{Spread: 400 * time.Millisecond}, Concurrency: 4}
	begin := time.Now()
	var mu sync.Mutex
	var starts []time.Duration
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			w.pace(context.Background())
			mu.Lock()
			starts = append(starts, time.Since(begin))
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(starts)
	for i, st := range starts {
		want := time.Duration(i) * 100 * time.Millisecond
		if st < want || st > want+80*time.Millisecond {
			t.Errorf("scan %d started at %s, want about %s", i, st, want)
		}
	}
	before := time.Now()
	w.pace(context.Background())
	if d := time.Since(before); d > 20*time.Millisecond {
		t.Errorf("the fifth scan waited %s, want no wait", d)
	}
}
