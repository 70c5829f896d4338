package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
)

// memStore is a RunStore in memory.
type memStore struct {
	artifacts map[string][]byte
	runs      map[string]rubric.Result
	fail      error
}

func (m *memStore) SaveArtifact(_ context.Context, sum string, data []byte) error {
	if m.artifacts == nil {
		m.artifacts = map[string][]byte{}
	}
	m.artifacts[sum] = data
	return nil
}

func (m *memStore) SaveRun(_ context.Context, _ []byte, b *evidence.Bundle, res rubric.Result) error {
	if m.fail != nil {
		return m.fail
	}
	if m.runs == nil {
		m.runs = map[string]rubric.Result{}
	}
	m.runs[b.Run.ID] = res
	return nil
}

func skipAll() Supply {
	return Supply{Skip: map[string]bool{evidence.SignalOSV: true, evidence.SignalSocket: true, evidence.SignalGitHub: true, evidence.SignalDNSSEC: true, evidence.SignalJudge: true}}
}

// TestRun: a scan is scored under the pipeline's rubric and saved (the
// lockfile, the run, the bundle file) before Run returns; a failed save is
// an error that still returns the scored run; a recollection goes the same
// way from a stored run, with no scan.
func TestRun(t *testing.T) {
	ctx := context.Background()
	rb := rubric.Current()
	lock := []byte(`{"lockfileVersion":3}`)
	scans := 0
	p := testPipeline(Config{
		Scanner: scannerFunc(func(context.Context, string, sandbox.Target) (*sandbox.Result, error) {
			scans++
			return &sandbox.Result{Outcome: evidence.OutcomeInstallFailed, Lockfile: lock,
				Install: &evidence.Install{Outcome: evidence.InstallFailed, FailedStep: evidence.StepFetch, Error: "npm install failed (E404): Not Found"}}, nil
		}),
		Supply: skipAll(),
		Rubric: rb,
	})
	rt := &Resolved{Target: Target{Raw: "npm:is-number@7.0.0"}, Name: "is-number", Version: "7.0.0", Source: "registry",
		registrySig: evidence.Signal{State: evidence.StateObserved}}
	const id = "20261201t000000z-00000000"

	t.Run("scan_saved", func(t *testing.T) {
		st := &memStore{}
		dir := t.TempDir()
		ran, err := p.Run(ctx, Job{Target: rt, Options: Options{RunID: id}}, StoreSaver{Store: st, BundleDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		want := rubric.Evaluate(ran.Bundle, rb)
		if got := st.runs[id]; got.RubricVersion != want.RubricVersion || len(got.Findings) != len(want.Findings) {
			t.Errorf("stored result %+v, want %+v", got, want)
		}
		if len(st.artifacts) != 1 {
			t.Errorf("stored %d artifacts, want the lockfile", len(st.artifacts))
		}
		data, err := os.ReadFile(filepath.Join(dir, id+".json"))
		if err != nil || string(data) != string(ran.BundleJSON) {
			t.Errorf("bundle file: %v", err)
		}
		if ran.BundlePath != filepath.Join(dir, id+".json") {
			t.Errorf("BundlePath = %q", ran.BundlePath)
		}
	})

	t.Run("save_fails", func(t *testing.T) {
		boom := errors.New("disk full")
		ran, err := p.Run(ctx, Job{Target: rt, Options: Options{RunID: id}}, StoreSaver{Store: &memStore{fail: boom}})
		if !errors.Is(err, boom) || ran == nil {
			t.Errorf("Run = %v, %v; want the scored run and the save's error", ran, err)
		}
	})

	t.Run("bundle_file_optional", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		st := &memStore{}
		_, err := p.Run(ctx, Job{Target: rt, Options: Options{RunID: id}}, StoreSaver{Store: st, BundleDir: file})
		if err == nil {
			t.Error("a bundle file that cannot be written is not an error")
		}
		if _, err := p.Run(ctx, Job{Target: rt, Options: Options{RunID: id}}, StoreSaver{Store: st, BundleDir: file, BundleFileOptional: true}); err != nil {
			t.Errorf("with BundleFileOptional: %v", err)
		}
	})

	t.Run("recollect", func(t *testing.T) {
		before := scans
		c := &countingSupply{}
		rp := testPipeline(Config{Supply: Supply{GitHub: githubFake{c}}, Rubric: rb})
		st := &memStore{}
		old := storedRun(t)
		ran, err := rp.Run(ctx, Job{Options: Options{RunID: "20261201t000000z-00000001"}, Recollect: &RecollectJob{From: old, Signals: []string{evidence.SignalGitHub}}}, StoreSaver{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		if scans != before || c.github.Load() != 1 {
			t.Errorf("scans %d, GitHub asked %d times; want no scan and one question", scans-before, c.github.Load())
		}
		if _, ok := st.runs["20261201t000000z-00000001"]; !ok || ran.Bundle.Run.Recollected == nil {
			t.Errorf("the derived run was not saved: %v", st.runs)
		}
	})

	if _, err := p.Run(ctx, Job{}, nil); err == nil {
		t.Error("a job with no target is not an error")
	}
}
