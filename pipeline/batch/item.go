// Package batch runs a list of targets through the pipeline: the list
// file's parser, the resolution and resume pass, the worker pool and the
// progress of a run, and the summary it ends with.
package batch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
	"github.com/verifymcp/verifymcp/supplychain"
)

// SchemaVersion identifies the JSON form of a batch summary.
const SchemaVersion = "verifymcp.batch/v1"

// Target statuses in a batch summary.
const (
	// StatusCompleted: scanned now, saved, sandbox outcome ok.
	StatusCompleted = "completed"
	// StatusFailed: scanned now and saved with another sandbox outcome, or
	// not scanned because of an error (not found, registry, engine); only
	// the latter is tried again by the next run of the batch.
	StatusFailed = "failed"
	// StatusSkipped: a result for the same artefact, inputs, tool version
	// and rubric version was already stored, or the line repeats another.
	StatusSkipped = "skipped"
	// StatusAbandoned: in flight when a second interrupt came; nothing saved.
	StatusAbandoned = "abandoned"
	// StatusNotStarted: not started because of an interrupt.
	StatusNotStarted = "not_started"
)

// resolveConcurrency bounds the registry lookups of the resolution pass.
const resolveConcurrency = 8

// Item is one target of a batch and what became of it.
type Item struct {
	Line int `json:"line"`
	// Target is the target as written (a tarball path made absolute).
	Target    string `json:"target"`
	Name      string `json:"name,omitempty"`
	Version   string `json:"version,omitempty"`
	Integrity string `json:"integrity,omitempty"`
	Status    string `json:"status"`
	// Outcome is the sandbox outcome of a scanned or skipped target, or
	// the class of error that stopped a target (not_found, ...).
	Outcome string `json:"outcome,omitempty"`
	// Error says what went wrong for a target that could not be scanned.
	Error string `json:"error,omitempty"`
	// SkipReason says why a target was skipped: "stored" or "duplicate of
	// line N".
	SkipReason string `json:"skip_reason,omitempty"`
	// RunID names the stored run: the new one, or the one that made the
	// target skip.
	RunID string `json:"run_id,omitempty"`
	// Score is the composite under the rubric in force (null when every
	// dimension was dropped or nothing was stored).
	Score *float64 `json:"score"`
	// PhasesMS are the times of a scan made now, by phase (see
	// Phases).
	PhasesMS map[string]int64 `json:"phases_ms,omitempty"`
	// Drift is how the scan made now compared with its identity's pin.
	Drift *ItemDrift `json:"drift,omitempty"`

	// Spec is the line as parsed; Resolved the exact artefact it
	// resolved to (nil until then, or when it did not resolve).
	Spec     Line               `json:"-"`
	Resolved *pipeline.Resolved `json:"-"`
	// Err is what stopped the target (nil when it was dealt with: scanned,
	// skipped, or failed as a package in the sandbox).
	Err error `json:"-"`
}

// Totals are the counts of a summary. Targets = Completed + Failed +
// Skipped + Abandoned + NotStarted; Scanned counts the scans saved now.
type Totals struct {
	Targets    int `json:"targets"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	Skipped    int `json:"skipped"`
	Abandoned  int `json:"abandoned"`
	NotStarted int `json:"not_started"`
	Scanned    int `json:"scanned"`
}

// PhaseStat sums up one phase over the scans made now.
type PhaseStat struct {
	N        int   `json:"n"`
	MedianMS int64 `json:"median_ms"`
	TotalMS  int64 `json:"total_ms"`
}

// Summary is what a batch reports on stdout.
type Summary struct {
	SchemaVersion string    `json:"schema_version"`
	File          string    `json:"file"`
	ToolVersion   string    `json:"tool_version"`
	RubricVersion string    `json:"rubric_version"`
	RubricHash    string    `json:"rubric_hash"`
	Concurrency   int       `json:"concurrency"`
	StartedAt     time.Time `json:"started_at"`
	DurationMS    int64     `json:"duration_ms"`
	Interrupted   bool      `json:"interrupted"`
	Totals        Totals    `json:"totals"`
	// FailedByOutcome counts failed targets by sandbox outcome or error class.
	FailedByOutcome map[string]int `json:"failed_by_outcome"`
	// PackagesPerHour is Scanned over the batch's wall time, preparation
	// and resolution included.
	PackagesPerHour float64              `json:"packages_per_hour"`
	Phases          map[string]PhaseStat `json:"phases"`
	// Drift sums up the scans made now compared with their pins.
	Drift   DriftSummary `json:"drift"`
	Targets []*Item      `json:"targets"`
}

// NewSummary sums up a batch of file that started at started and ends
// now, under rubric rb.
func NewSummary(file, toolVersion string, rb *rubric.Rubric, concurrency int, started time.Time, interrupted bool, items []*Item) Summary {
	sum := Summary{
		SchemaVersion: SchemaVersion, File: file, ToolVersion: toolVersion, RubricVersion: rb.Version, RubricHash: rb.Hash,
		Concurrency: concurrency, StartedAt: started.UTC(), Interrupted: interrupted, Targets: items,
	}
	wall := time.Since(started)
	sum.DurationMS = wall.Milliseconds()
	sum.Totals, sum.FailedByOutcome, sum.Phases, sum.PackagesPerHour = Summarize(items, wall)
	sum.Drift = SummarizeDrift(items)
	return sum
}

// Summarize counts the items' statuses, failures by outcome and the
// phases of the scans made now.
func Summarize(items []*Item, wall time.Duration) (Totals, map[string]int, map[string]PhaseStat, float64) {
	t := Totals{Targets: len(items)}
	failed := map[string]int{}
	phases := map[string][]int64{}
	for _, it := range items {
		switch it.Status {
		case StatusCompleted:
			t.Completed++
		case StatusFailed:
			t.Failed++
			failed[it.Outcome]++
		case StatusSkipped:
			t.Skipped++
		case StatusAbandoned:
			t.Abandoned++
		default:
			t.NotStarted++
		}
		if it.PhasesMS != nil {
			t.Scanned++
			for k, v := range it.PhasesMS {
				phases[k] = append(phases[k], v)
			}
		}
	}
	stats := map[string]PhaseStat{}
	for k, vs := range phases {
		slices.Sort(vs)
		var sum int64
		for _, v := range vs {
			sum += v
		}
		// The lower median: a value some scan really took.
		stats[k] = PhaseStat{N: len(vs), MedianMS: vs[(len(vs)-1)/2], TotalMS: sum}
	}
	perHour := 0.0
	if wall > 0 {
		perHour = float64(t.Scanned) / wall.Hours()
	}
	return t, failed, stats, perHour
}

// Phases are the phase times of one scan, from its bundle and the
// wall times measured around it. session.handshake excludes start-up;
// session.calls is the tool calls, session.shutdown the wait for the
// server to exit; other is the scan's wall time less the install and
// session phases: container and observer set-up and removal, the home
// comparison, the second listing, and the collectors that run after the
// sandbox (OSV, Socket, the judge).
func Phases(b *evidence.Bundle, scan, save time.Duration) map[string]int64 {
	ph := map[string]int64{"scan": scan.Milliseconds(), "save": save.Milliseconds()}
	ph["resolve"] = b.Signal(evidence.SignalRegistry).DurationMS
	accounted := int64(0)
	if b.Install != nil {
		ph["install.fetch"], ph["install.scripts"] = b.Install.FetchMS, b.Install.ScriptsMS
		accounted += b.Install.FetchMS + b.Install.ScriptsMS
	}
	if s := b.Session; s != nil {
		ph["session.start"], ph["session.handshake"], ph["session.list"] = s.StartMS, s.HandshakeMS-s.StartMS, s.ListMS
		accounted += s.HandshakeMS + s.ListMS
	}
	if b.Exercise != nil {
		ph["session.calls"] = b.Exercise.ElapsedMS
		accounted += b.Exercise.ElapsedMS
	}
	if s := b.Session; s != nil && s.Shutdown != nil {
		sd := s.Shutdown.StdinWaitMS + s.Shutdown.TermWaitMS + s.Shutdown.KillWaitMS
		ph["session.shutdown"] = sd
		accounted += sd
	}
	if b.Behavior != nil {
		var idle int64
		for _, w := range b.Behavior.Watches {
			idle += w.IdleMS
		}
		ph["session.idle"] = idle
		accounted += idle
	}
	for _, name := range []string{evidence.SignalOSV, evidence.SignalSocket, evidence.SignalGitHub, evidence.SignalDNSSEC, evidence.SignalJudge} {
		if s := b.Signal(name); s.State != evidence.StateNotAssessed {
			ph[name] = s.DurationMS
		}
	}
	ph["other"] = max(0, scan.Milliseconds()-accounted)
	return ph
}

// ErrorOutcome names the class of error that stopped a target. An engine
// failure is one that is pipeline.ErrSandbox.
func ErrorOutcome(err error) string {
	var env *sandbox.EnvironmentError
	switch {
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, supplychain.ErrPackageNotFound), errors.Is(err, supplychain.ErrVersionNotFound):
		return "not_found"
	case errors.Is(err, supplychain.ErrRegistryUnreachable):
		return "registry_unreachable"
	case errors.As(err, &env):
		// tls_verification, registry_dns, registry_unreachable,
		// registry_failing, egress_proxy: met in the sandbox.
		return string(env.Kind)
	case errors.Is(err, sandbox.ErrBadBin):
		return "bad_bin"
	case errors.Is(err, pipeline.ErrBadTarget), errors.Is(err, pipeline.ErrUnsupported), errors.Is(err, supplychain.ErrBadName):
		return "bad_target"
	case errors.Is(err, pipeline.ErrSandbox):
		return "engine_error"
	default:
		return "error"
	}
}

// Fail records that err stopped the target.
func (it *Item) Fail(err error) {
	it.Status, it.Outcome, it.Error, it.Err = StatusFailed, ErrorOutcome(err), oneLine(err.Error()), err
}

// ResumeKey is the store key of a resolved item: a stored run with the
// same key makes the target skip.
func (it *Item) ResumeKey(toolVersion, rubricVersion string) store.ResumeKey {
	eco := it.Resolved.Target.Ecosystem
	if eco == "" {
		eco = "npm"
	}
	k := store.ResumeKey{
		Ecosystem: eco, Name: it.Resolved.Name, Version: it.Resolved.Version, Integrity: it.Resolved.Integrity,
		ToolVersion: toolVersion, RubricVersion: rubricVersion,
		Args: it.Spec.Args, EnvNames: slices.Sorted(maps.Keys(it.Spec.Env)), Bin: it.Spec.Bin,
	}
	if k.Integrity == "" {
		// A PyPI release: which of its files the scan takes is known after.
		k.Integrities = it.Resolved.FileIntegrities()
	}
	return k
}

// Resumable reports whether a stored run can stand for the item: its
// artefact's digest is known before the scan. An image named by tag is
// resolved to a digest only when the sandbox pulls it, so it is always
// scanned.
func (it *Item) Resumable() bool {
	k := it.ResumeKey("", "")
	return k.Integrity != "" || len(k.Integrities) > 0
}

// dedupKey identifies what one line asks to scan, for finding repeats.
func (it *Item) dedupKey() string {
	k := it.ResumeKey("", "")
	return strings.Join(append([]string{k.Ecosystem, k.Name, k.Version, k.Integrity, strings.Join(k.Integrities, ","), k.Bin, strings.Join(k.EnvNames, ","), "--"}, k.Args...), "\x00")
}

// NewItems makes the items of a batch's lines, in order.
func NewItems(lines []Line) []*Item {
	items := make([]*Item, len(lines))
	for i, bl := range lines {
		items[i] = &Item{Line: bl.Line, Target: bl.Target.Raw, Spec: bl}
	}
	return items
}

// Stopped is nil when every item was dealt with, else an error with
// the first stopped item's error (and so its exit code): "N of M targets
// could not be " + what.
func Stopped(items []*Item, file, what string) error {
	var stopped []*Item
	for _, it := range items {
		if it.Err != nil {
			stopped = append(stopped, it)
		}
	}
	if len(stopped) == 0 {
		return nil
	}
	it := stopped[0]
	return fmt.Errorf("%d of %d targets could not be %s; first, %s:%d %s: %w",
		len(stopped), len(items), what, file, it.Line, it.Target, it.Err)
}

// oneLine is the first line of s, trimmed.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}
