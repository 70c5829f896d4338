package benchmark

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Publishing (cases run --publish DIR). What may be published is written
// per track (the package track, the only one this harness scores) and per
// kind of case, synthetic and reviewed apart, never pooled: DIR/package/
// KIND.json (the report of that kind's cases: each with its reviewer,
// provenance, selection date, the rubric it was reviewed under and the
// run's, the run date and the state of every signal) and KIND.txt (the same
// as a table). A kind is published only when every case of it is
// publishable; a withdrawn case does not hold it back: it is counted in no
// total and listed as withdrawn. Otherwise the kind is refused, with every
// case's reasons, and nothing of it is written. Each part written is
// recorded in DIR/publications.json; a later run reads it and lists every
// earlier publication that counted a case since corrected or withdrawn:
// the method republishes such a result without the case, with a note.

// LedgerFile is the record of what was published from DIR.
const LedgerFile = "publications.json"

// ErrRefused is returned by Publish when a part could not be published.
var ErrRefused = errors.New("not published")

// Publication is one part published.
type Publication struct {
	PublishedAt   time.Time `json:"published_at"`
	Track         string    `json:"track"`
	Kind          Kind      `json:"kind"`
	RubricVersion string    `json:"rubric_version"`
	File          string    `json:"file"`
	// Cases are the ids counted in its totals; Withdrawn those listed as
	// withdrawn.
	Cases     []string `json:"cases"`
	Withdrawn []string `json:"withdrawn"`
}

// Ledger is the content of LedgerFile.
type Ledger struct {
	Publications []Publication `json:"publications"`
}

// PublishResult says what Publish did.
type PublishResult struct {
	// Written are the files written, relative to the directory.
	Written []string
	// Refused says, per kind, why it was not published.
	Refused []string
	// Republish lists the earlier publications that counted a case since
	// corrected or withdrawn.
	Republish []string
}

// Republications lists the publications of a ledger that counted a case
// the report shows corrected or withdrawn after they were made (or whose
// open dispute asked for its withdrawal after they were made).
func Republications(led Ledger, rep Report) []string {
	byID := map[string]CaseResult{}
	for _, r := range rep.Cases {
		byID[r.ID] = r
	}
	var out []string
	for _, p := range led.Publications {
		pub := p.PublishedAt.UTC().Format(time.DateOnly)
		for _, id := range p.Cases {
			r, ok := byID[id]
			if !ok {
				continue
			}
			for i, d := range r.DisputeLog {
				var what, when string
				switch {
				case d.State() == DisputeCorrected || d.State() == DisputeWithdrawn:
					what, when = d.State(), d.AnsweredOn
				case d.Open() && d.WithdrawalRequested:
					what, when = "asked to be withdrawn while a dispute is open", d.Date
				default:
					continue
				}
				if when > pub {
					out = append(out, fmt.Sprintf("the %s %s results published on %s (%s) counted case %s, %s on %s (dispute %d): republish them without it, with a note",
						p.Track, p.Kind, pub, p.File, id, what, when, i+1))
				}
			}
		}
	}
	return out
}

// Publish writes what of rep may be published into dir, records it in the
// ledger, and returns what it did; the error wraps ErrRefused when a kind
// was refused (the other kinds are still written).
func Publish(dir string, rep Report, now time.Time) (PublishResult, error) {
	var res PublishResult
	led, err := readLedger(dir)
	if err != nil {
		return res, err
	}
	res.Republish = Republications(led, rep)
	for _, ks := range rep.Kinds {
		if ks.Cases == 0 {
			continue
		}
		if !ks.Publishable {
			var why []string
			for _, r := range rep.Cases {
				if r.Kind == ks.Kind && slices.Contains(ks.NotPublishable, r.ID) {
					why = append(why, r.ID+": "+strings.Join(r.NotPublishable, "; "))
				}
			}
			res.Refused = append(res.Refused, fmt.Sprintf("%s cases not published, %s not publishable:\n  %s",
				ks.Kind, plural(len(ks.NotPublishable), "case"), strings.Join(why, "\n  ")))
			continue
		}
		part := Report{SchemaVersion: rep.SchemaVersion, Run: rep.Run, Signals: rep.Signals, Kinds: []KindSummary{ks}, Cases: []CaseResult{}}
		var counted []string
		for _, r := range rep.Cases {
			if r.Kind != ks.Kind {
				continue
			}
			part.Cases = append(part.Cases, r)
			if r.Withdrawn == "" {
				counted = append(counted, r.ID)
			}
		}
		base := filepath.Join(TrackPackage, string(ks.Kind))
		var js, table bytes.Buffer
		if err := WriteJSON(&js, part); err != nil {
			return res, err
		}
		if err := WriteTable(&table, part); err != nil {
			return res, err
		}
		if err := os.MkdirAll(filepath.Join(dir, TrackPackage), 0o755); err != nil {
			return res, err
		}
		for name, data := range map[string][]byte{base + ".json": js.Bytes(), base + ".txt": table.Bytes()} {
			if err := writeFileAtomic(filepath.Join(dir, name), data); err != nil {
				return res, err
			}
			res.Written = append(res.Written, name)
		}
		led.Publications = append(led.Publications, Publication{PublishedAt: now.UTC(), Track: TrackPackage, Kind: ks.Kind,
			RubricVersion: rep.Run.RubricVersion, File: base + ".json", Cases: nonNil(counted), Withdrawn: nonNil(ks.Withdrawn)})
	}
	slices.Sort(res.Written)
	if len(res.Written) > 0 {
		data, err := json.MarshalIndent(led, "", "  ")
		if err != nil {
			return res, err
		}
		if err := writeFileAtomic(filepath.Join(dir, LedgerFile), append(data, '\n')); err != nil {
			return res, err
		}
		res.Written = append(res.Written, LedgerFile)
	}
	if len(res.Refused) > 0 {
		return res, fmt.Errorf("%w: %s", ErrRefused, strings.Join(res.Refused, "\n"))
	}
	return res, nil
}

func readLedger(dir string) (Ledger, error) {
	var led Ledger
	data, err := os.ReadFile(filepath.Join(dir, LedgerFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return led, nil
	case err != nil:
		return led, err
	}
	if err := json.Unmarshal(data, &led); err != nil {
		return led, fmt.Errorf("%s: %w", filepath.Join(dir, LedgerFile), err)
	}
	return led, nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so that a reader never sees half a file.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
