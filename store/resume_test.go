package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// resumeSave stores the everything fixture as run id, changed by edit
// before it is encoded, with its result under rubric v1.
func resumeSave(t *testing.T, s *Store, id string, date time.Time, edit func(b *evidence.Bundle)) {
	t.Helper()
	b := loadFixture(t, "everything.bundle.json")
	b.Run.ID, b.Run.Date = id, date
	if edit != nil {
		edit(b)
	}
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := rubric.Load("1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRun(context.Background(), data, b, rubric.Evaluate(b, v1)); err != nil {
		t.Fatal(err)
	}
}

func TestResumeFind(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	fx := loadFixture(t, "everything.bundle.json")
	base := ResumeKey{
		Ecosystem: "npm", Name: fx.Target.Name, Version: fx.Target.Version, Integrity: fx.Target.Integrity,
		ToolVersion: fx.Run.Tool.Version, RubricVersion: "1",
	}
	resumeSave(t, s, "old", day, nil)
	resumeSave(t, s, "new", day.Add(time.Hour), nil)
	resumeSave(t, s, "with-args", day.Add(2*time.Hour), func(b *evidence.Bundle) {
		b.Target.Args = []string{"/data", "--ro"}
		b.Target.EnvNames = []string{"B_TOKEN", "A_KEY"}
	})
	resumeSave(t, s, "other-tool", day.Add(3*time.Hour), func(b *evidence.Bundle) { b.Run.Tool.Version = "9.9.9" })
	resumeSave(t, s, "other-artefact", day.Add(4*time.Hour), func(b *evidence.Bundle) { b.Target.Integrity = "sha512-AAAA" })
	resumeSave(t, s, "crashed", day.Add(5*time.Hour), func(b *evidence.Bundle) {
		b.Target.Version = "0.0.1"
		b.Sandbox.Outcome = evidence.OutcomeStartCrashed
	})

	tests := []struct {
		name    string
		edit    func(k *ResumeKey)
		want    string // run id; "" for not found
		outcome evidence.Outcome
	}{
		{name: "newest_matching_run", edit: func(k *ResumeKey) {}, want: "new", outcome: evidence.OutcomeOK},
		{name: "ecosystem_defaults_to_npm", edit: func(k *ResumeKey) { k.Ecosystem = "" }, want: "new", outcome: evidence.OutcomeOK},
		{name: "other_rubric_version_is_not_done", edit: func(k *ResumeKey) { k.RubricVersion = "2" }},
		{name: "other_tool_version_is_not_done", edit: func(k *ResumeKey) { k.ToolVersion = "0.2.0" }},
		{name: "the_other_tool_versions_run", edit: func(k *ResumeKey) { k.ToolVersion = "9.9.9" }, want: "other-tool", outcome: evidence.OutcomeOK},
		{name: "other_artefact_same_version_is_not_done", edit: func(k *ResumeKey) { k.Integrity = "sha512-BBBB" }},
		{name: "republished_artefact_found_by_digest", edit: func(k *ResumeKey) { k.Integrity = "sha512-AAAA" }, want: "other-artefact", outcome: evidence.OutcomeOK},
		{name: "other_version_is_not_done", edit: func(k *ResumeKey) { k.Version = "2025.1.1" }},
		{name: "args_in_order_and_env_names_as_a_set", edit: func(k *ResumeKey) {
			k.Args, k.EnvNames = []string{"/data", "--ro"}, []string{"A_KEY", "B_TOKEN"}
		}, want: "with-args", outcome: evidence.OutcomeOK},
		{name: "args_in_another_order_are_another_scan", edit: func(k *ResumeKey) {
			k.Args, k.EnvNames = []string{"--ro", "/data"}, []string{"A_KEY", "B_TOKEN"}
		}},
		{name: "env_names_are_part_of_the_key", edit: func(k *ResumeKey) { k.Args = []string{"/data", "--ro"} }},
		{name: "bin_asked_for_matches_the_chosen_bin", edit: func(k *ResumeKey) { k.Bin = fx.Target.Bin.Name }, want: "new", outcome: evidence.OutcomeOK},
		{name: "another_bin_is_another_scan", edit: func(k *ResumeKey) { k.Bin = "other" }},
		{name: "a_failed_package_is_done_too", edit: func(k *ResumeKey) { k.Version = "0.0.1" }, want: "crashed", outcome: evidence.OutcomeStartCrashed},
		// A PyPI release is asked for by the digests of its files: the
		// fetch step took one of them, known only after the scan.
		{name: "a_release_found_by_one_of_its_files", edit: func(k *ResumeKey) {
			k.Integrity, k.Integrities = "", []string{"sha256-WHEEL", fx.Target.Integrity}
		}, want: "new", outcome: evidence.OutcomeOK},
		{name: "a_release_whose_files_no_run_took", edit: func(k *ResumeKey) { k.Integrity, k.Integrities = "", []string{"sha256-WHEEL", "sha256-SDIST"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := base
			tt.edit(&k)
			got, err := s.ResumeFind(ctx, k)
			if tt.want == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("ResumeFind = %+v, %v; want ErrNotFound", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ResumeFind: %v", err)
			}
			if got.RunID != tt.want || got.Outcome != tt.outcome || got.Score == nil || got.Date.IsZero() {
				t.Errorf("ResumeFind = %+v, want run %s outcome %s with a score", got, tt.want, tt.outcome)
			}
		})
	}

	t.Run("a_run_without_a_result_under_the_version_is_not_done", func(t *testing.T) {
		k := base
		k.RubricVersion = "2"
		v1, _ := rubric.Load("1")
		res := rubric.Evaluate(fx, v1)
		res.RubricVersion = "2"
		saveResult(t, s, "old", res)
		got, err := s.ResumeFind(ctx, k)
		if err != nil || got.RunID != "old" {
			t.Errorf("after a rescore under 2: %+v, %v; want run old", got, err)
		}
	})

	t.Run("incomplete_key_is_refused", func(t *testing.T) {
		k := base
		k.Integrity = ""
		if _, err := s.ResumeFind(ctx, k); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("a key without integrity: %v; want a refusal, not not-found", err)
		}
	})
}
