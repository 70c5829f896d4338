package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// ResumeKey names one scan a batch asks for: the exact artefact (ecosystem,
// name, version and integrity, the artefact's digest), what the server was
// given, and the tool and rubric versions. A batch that finds a stored run
// for its key skips the scan, so that running the same batch again does no
// work twice. Scan settings that are not part of the key (limits, timeouts,
// behaviour capture, skipped third-party signals) do not make a stored run
// stale.
type ResumeKey struct {
	Ecosystem string
	Name      string
	Version   string
	// Integrity is the artefact's SRI digest, as recorded in the bundle's
	// target. It is not a column: it is read from the stored bundle.
	Integrity string
	// Integrities, for a PyPI release, are the SRI digests of its files:
	// which one the fetch step takes (a wheel for the sandbox, or the
	// sdist) is known only after the scan, so a stored run of any of them
	// is the release's. Used when Integrity is empty.
	Integrities   []string
	ToolVersion   string
	RubricVersion string
	// Args are the server's arguments, in order; nil and empty are equal.
	Args []string
	// EnvNames are the names of the placeholder variables the server was
	// given (values are never stored), in any order.
	EnvNames []string
	// Bin, when set, is the entry point asked for; empty matches the run
	// whatever entry point the rule chose.
	Bin string
}

// ResumeRun is the stored run that satisfies a ResumeKey.
type ResumeRun struct {
	RunID   string
	Date    time.Time // UTC
	Outcome evidence.Outcome
	// Score is the composite under the key's rubric version; nil when every
	// dimension was dropped.
	Score *float64
}

// ResumeFind returns the newest stored run of k's artefact, scanned by k's
// tool version with k's inputs and scored under k's rubric version, or
// ErrNotFound. The run and its result are saved in one transaction
// (SaveRun), so a run found here is complete: a process killed mid-save
// leaves either both or neither.
func (s *Store) ResumeFind(ctx context.Context, k ResumeKey) (ResumeRun, error) {
	if k.Name == "" || k.Version == "" || (k.Integrity == "" && len(k.Integrities) == 0) || k.ToolVersion == "" || k.RubricVersion == "" {
		return ResumeRun{}, fmt.Errorf("store: resume lookup: name, version, integrity (or a release's file digests), tool and rubric versions are required")
	}
	eco := k.Ecosystem
	if eco == "" {
		eco = "npm"
	}
	// runs_by_target narrows the candidates to the few runs of one exact
	// version; only their bundles' targets are decoded, for what is not a
	// column.
	rows, err := s.db.QueryContext(ctx, s.q(`
SELECT r.run_id, r.run_date, r.outcome, res.score, r.bundle
FROM runs r JOIN results res ON res.run_id = r.run_id
WHERE r.ecosystem = ? AND r.target_name = ? AND r.target_version = ? AND r.tool_version = ?
	AND res.rubric_version = ?
ORDER BY r.run_date DESC, r.run_id`),
		eco, k.Name, k.Version, k.ToolVersion, k.RubricVersion)
	if err != nil {
		return ResumeRun{}, fmt.Errorf("store: resume lookup %s@%s: %w", k.Name, k.Version, s.redact(err))
	}
	defer rows.Close()
	for rows.Next() {
		var rr ResumeRun
		var date int64
		var outcome string
		var stored sql.RawBytes
		var score sql.NullFloat64
		if err := rows.Scan(&rr.RunID, &date, &outcome, &score, &stored); err != nil {
			return ResumeRun{}, fmt.Errorf("store: resume lookup %s@%s: %w", k.Name, k.Version, s.redact(err))
		}
		var t resumeTarget
		bundle, err := storedJSON(stored)
		if err != nil || json.Unmarshal(bundle, &t) != nil {
			continue // not a bundle this program can compare: not a match
		}
		if !k.integrityMatches(t.Target.Integrity) || !sameList(t.Target.Args, k.Args, false) ||
			!sameList(t.Target.EnvNames, k.EnvNames, true) || (k.Bin != "" && t.Target.Bin.Name != k.Bin) {
			continue
		}
		rr.Date = time.Unix(0, date).UTC()
		rr.Outcome = evidence.Outcome(outcome)
		if score.Valid {
			v := score.Float64
			rr.Score = &v
		}
		return rr, nil
	}
	if err := rows.Err(); err != nil {
		return ResumeRun{}, fmt.Errorf("store: resume lookup %s@%s: %w", k.Name, k.Version, s.redact(err))
	}
	return ResumeRun{}, fmt.Errorf("store: resume lookup %s@%s: %w", k.Name, k.Version, ErrNotFound)
}

// integrityMatches reports whether a stored run's artefact digest is the
// key's: its Integrity, or one of a release's files.
func (k ResumeKey) integrityMatches(stored string) bool {
	if k.Integrity != "" {
		return stored == k.Integrity
	}
	return stored != "" && slices.Contains(k.Integrities, stored)
}

// resumeTarget is the part of a bundle a ResumeKey compares.
type resumeTarget struct {
	Target struct {
		Integrity string   `json:"integrity"`
		Args      []string `json:"args"`
		EnvNames  []string `json:"env_names"`
		Bin       struct {
			Name string `json:"name"`
		} `json:"bin"`
	} `json:"target"`
}

// sameList compares a list of strings from a bundle with want; nil and
// empty are equal. unordered compares them as sets.
func sameList(got, want []string, unordered bool) bool {
	if len(got) != len(want) {
		return false
	}
	if unordered {
		got = slices.Sorted(slices.Values(got))
		want = slices.Sorted(slices.Values(want))
	}
	return slices.Equal(got, want)
}
