package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/judge"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// recorder is an OSV client and a judge that record what they were asked,
// and say so on asked.
type recorder struct {
	mu       sync.Mutex
	locks    []string
	surfaces []string
	asked    chan string
}

func (r *recorder) Scan(_ context.Context, lockfile []byte, _ string) (*evidence.OSVResult, supplychain.Fetch, error) {
	r.mu.Lock()
	r.locks = append(r.locks, string(lockfile))
	r.mu.Unlock()
	r.asked <- "osv"
	return &evidence.OSVResult{Source: "api", Packages: 1, Vulnerabilities: []evidence.Vulnerability{}}, supplychain.Fetch{Endpoint: "loopback", FetchedAt: time.Now()}, nil
}

func (r *recorder) Judge(_ context.Context, c *contract.Contract, _ string) (*judge.Result, error) {
	r.mu.Lock()
	r.surfaces = append(r.surfaces, c.SchemaHash)
	r.mu.Unlock()
	r.asked <- "judge"
	return nil, judge.ErrUnavailable
}

func surface(t *testing.T, tool string) *contract.Contract {
	t.Helper()
	c := &contract.Contract{Tools: []contract.Tool{{Name: tool, Description: "reads " + tool}}}
	if err := contract.Normalize(c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEarlyCollection: OSV and the judge are asked while the sandbox is
// still running (the fake sandbox waits for both before it returns), and
// their answers are used only when the scan returned the same lockfile
// and surface; otherwise they are asked again about what it returned.
func TestEarlyCollection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changed bool
	}{{"same inputs", false}, {"inputs changed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{asked: make(chan string, 8)}
			first, final := surface(t, "read_file"), surface(t, "read_file")
			lock, finalLock := []byte(`{"lockfileVersion":3}`), []byte(`{"lockfileVersion":3}`)
			if tc.changed {
				final, finalLock = surface(t, "write_file"), []byte(`{"lockfileVersion":3,"packages":{}}`)
			}
			scanner := scannerFunc(func(ctx context.Context, _ string, st sandbox.Target) (*sandbox.Result, error) {
				if st.Hooks == nil {
					t.Fatal("no hooks")
				}
				st.Hooks.Installed(lock)
				st.Hooks.Listed(first)
				// The idle watch: both answers must be asked for meanwhile.
				for range 2 {
					select {
					case <-rec.asked:
					case <-time.After(5 * time.Second):
						t.Fatal("the sandbox returned before OSV and the judge were both asked")
					}
				}
				return &sandbox.Result{Outcome: evidence.OutcomeOK, Lockfile: finalLock, Contract: final,
					Install: &evidence.Install{Outcome: evidence.InstallOK}, Session: &evidence.Session{Outcome: evidence.OutcomeOK}}, nil
			})
			p := testPipeline(Config{Scanner: scanner, Judge: rec,
				Supply: Supply{OSV: rec, Skip: map[string]bool{evidence.SignalSocket: true, evidence.SignalGitHub: true, evidence.SignalDNSSEC: true}}})
			rt := &Resolved{Target: Target{Raw: "npm:is-number@7.0.0"}, Name: "is-number", Version: "7.0.0", Source: "registry",
				registrySig: evidence.Signal{State: evidence.StateObserved}}
			scanned, err := p.Scan(context.Background(), rt, Options{RunID: "20261201t000000z-00000000"})
			if err != nil {
				t.Fatal(err)
			}
			b := scanned.Bundle
			if b.Signals[evidence.SignalOSV].State != evidence.StateObserved || b.Signals[evidence.SignalJudge].State != evidence.StateUnavailable {
				t.Errorf("signals: osv %+v, judge %+v", b.Signals[evidence.SignalOSV], b.Signals[evidence.SignalJudge])
			}
			wantLocks, wantSurfaces := []string{string(lock)}, []string{first.SchemaHash}
			if tc.changed {
				wantLocks, wantSurfaces = append(wantLocks, string(finalLock)), append(wantSurfaces, final.SchemaHash)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.locks) != len(wantLocks) || rec.locks[len(rec.locks)-1] != wantLocks[len(wantLocks)-1] {
				t.Errorf("OSV asked about %q, want %q", rec.locks, wantLocks)
			}
			if len(rec.surfaces) != len(wantSurfaces) || rec.surfaces[len(rec.surfaces)-1] != wantSurfaces[len(wantSurfaces)-1] {
				t.Errorf("the judge asked about %q, want %q", rec.surfaces, wantSurfaces)
			}
		})
	}
}
