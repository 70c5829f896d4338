// Package realcorpus reads the real-surface corpus (README.md in this
// directory: the selection rule, the split into tuning and held-out
// servers), computes the findings the scanner raises on each server, and
// measures them against the review: per code, how many were raised, how
// many a reviewer found justified, and the false discovery rate, on each
// side of the split and for each ecosystem apart.
//
// A server's findings come from two places. Its listing, recorded by the
// MCP Inspector outside the sandbox (recordings/), gives every
// pkg.contract. code: the rubric's static codes and the contract checks,
// computed here by the code under test. Its scan in the sandbox
// (scans/ID.json, exported from the stored run by
// bench/realcorpus/export.sh) gives every other code: install, session,
// behaviour and the supply chain.
package realcorpus

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/contract/checks"
	"github.com/verifymcp/verifymcp/contract/inspector"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// Sides of the split.
const (
	SideTuning  = "tuning"
	SideHeldOut = "heldout"
)

// Server is one server of the corpus.
type Server struct {
	ID, Ecosystem, Name, Version string
	// Side is SideTuning or SideHeldOut, as split.tsv has it now.
	Side string
	// Recording is the Inspector's listing.
	Recording inspector.Recording
}

// Load reads split.tsv and the recording of every server it names.
func Load(dir string) ([]Server, error) {
	f, err := os.Open(filepath.Join(dir, "split.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Server
	sc := bufio.NewScanner(f)
	var cols map[string]int
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Split(sc.Text(), "\t")
		if cols == nil {
			cols = map[string]int{}
			for i, c := range fields {
				cols[c] = i
			}
			for _, c := range []string{"ecosystem", "name", "version", "id", "side"} {
				if _, ok := cols[c]; !ok {
					return nil, fmt.Errorf("split.tsv: no column %q", c)
				}
			}
			continue
		}
		get := func(c string) string {
			if i := cols[c]; i < len(fields) {
				return strings.TrimSpace(fields[i])
			}
			return ""
		}
		s := Server{ID: get("id"), Ecosystem: get("ecosystem"), Name: get("name"), Version: get("version"), Side: get("side")}
		if s.Side != SideTuning && s.Side != SideHeldOut {
			return nil, fmt.Errorf("split.tsv:%d: side %q", line, s.Side)
		}
		if s.Recording, err = inspector.ReadFile(filepath.Join(dir, "recordings", s.ID+".inspector.json")); err != nil {
			return nil, fmt.Errorf("split.tsv:%d: %w", line, err)
		}
		if !s.Recording.Listed {
			return nil, fmt.Errorf("split.tsv:%d: %s did not list, and only listed servers are in the corpus", line, s.ID)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// Source says where a finding came from.
const (
	SourceListing = "listing"
	SourceScan    = "scan"
)

// Finding is one finding on one server.
type Finding struct {
	Server, Ecosystem, Side string
	Code, Severity          string
	Subject                 string
	// Field is the path of the text within the subject, for the contract
	// checks' findings.
	Field             string
	Evidence, Message string
	Source            string
}

// Key names a finding for the review: server, code, subject and field.
func (f Finding) Key() string {
	return strings.Join([]string{f.Server, f.Code, f.Subject, f.Field}, " | ")
}

// listingDate is the run date given to the evaluation of a listing, so
// that nothing in it reads the clock.
var listingDate = time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)

// ListingFindings returns the pkg.contract. findings the rubric raises on
// a server's listing: the contract checks' with their field, and the
// rubric's static codes (annotations, schemas, descriptions).
func ListingFindings(s Server, r *rubric.Rubric) []Finding {
	c := s.Recording.Contract
	b := &evidence.Bundle{
		SchemaVersion: evidence.SchemaVersion,
		Run:           evidence.Run{ID: "realcorpus-" + s.ID, Date: listingDate},
		Target:        evidence.Target{Ecosystem: s.Ecosystem, Name: s.Name, Version: s.Version},
		Signals:       map[string]evidence.Signal{evidence.SignalContract: {State: evidence.StateObserved}},
		Contract:      c,
	}
	fromChecks := map[string]bool{}
	for _, ci := range checks.CheckCodes() {
		fromChecks[ci.Code] = true
	}
	var out []Finding
	add := func(code, sev, subject, field, ev, msg string) {
		out = append(out, Finding{Server: s.ID, Ecosystem: s.Ecosystem, Side: s.Side, Code: code, Severity: sev,
			Subject: subject, Field: field, Evidence: ev, Message: msg, Source: SourceListing})
	}
	for _, f := range rubric.Evaluate(b, r).Findings {
		if strings.HasPrefix(f.Code, "pkg.contract.") && !fromChecks[f.Code] && f.Kind == rubric.KindFinding {
			add(f.Code, string(f.Severity), f.Subject, "", f.Evidence, f.Message)
		}
	}
	for _, f := range checks.Check(c) {
		def, ok := r.Code(f.Code)
		if !ok {
			continue // a code the rubric does not score
		}
		add(f.Code, string(def.Severity), f.Kind+":"+f.Subject, f.Field, f.Evidence, f.Message)
	}
	return out
}

// Scan is a server's scan in the sandbox, as scans/ID.json keeps it.
type Scan struct {
	ID            string                    `json:"id"`
	Target        string                    `json:"target"`
	RunID         string                    `json:"run_id"`
	Date          string                    `json:"date"`
	ToolVersion   string                    `json:"tool_version"`
	RubricVersion string                    `json:"rubric_version"`
	Outcome       string                    `json:"outcome"`
	Signals       map[string]evidence.State `json:"signals"`
	Findings      []ScanFinding             `json:"findings"`
}

// ScanFinding is one finding of a scan.
type ScanFinding struct {
	Code     string `json:"code"`
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Subject  string `json:"subject"`
	Message  string `json:"message"`
	Evidence string `json:"evidence"`
}

// ErrNoScan is returned for a server with no scan yet.
var ErrNoScan = errors.New("no scan")

// ReadScan reads scans/ID.json.
func ReadScan(dir, id string) (Scan, error) {
	b, err := os.ReadFile(filepath.Join(dir, "scans", id+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return Scan{}, ErrNoScan
	}
	if err != nil {
		return Scan{}, err
	}
	var sc Scan
	if err := json.Unmarshal(b, &sc); err != nil {
		return Scan{}, fmt.Errorf("scans/%s.json: %w", id, err)
	}
	return sc, nil
}

// ScanFindings returns the findings of a server's scan other than the
// pkg.contract. ones, which its listing gives.
func ScanFindings(s Server, sc Scan) []Finding {
	var out []Finding
	for _, f := range sc.Findings {
		if strings.HasPrefix(f.Code, "pkg.contract.") || f.Kind != string(rubric.KindFinding) {
			continue
		}
		out = append(out, Finding{Server: s.ID, Ecosystem: s.Ecosystem, Side: s.Side, Code: f.Code, Severity: f.Severity,
			Subject: f.Subject, Evidence: f.Evidence, Message: f.Message, Source: SourceScan})
	}
	return out
}

// sortFindings orders findings by server, code, subject and field.
func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int { return strings.Compare(a.Key(), b.Key()) })
}

// JudgeSide computes the findings of every server of one side ("" for
// both), from its listing and its scan snapshot where there is one, and
// judges them against review.yaml. It returns the judged findings and the
// servers of that side that have no scan snapshot yet.
func JudgeSide(dir string, servers []Server, side string) ([]Judged, []string, error) {
	r := rubric.Current()
	rf, err := ReadReviews(filepath.Join(dir, "review.yaml"))
	if err != nil {
		return nil, nil, err
	}
	byID := map[string]Server{}
	var fs []Finding
	var unscanned []string
	for _, s := range servers {
		if side != "" && s.Side != side {
			continue
		}
		byID[s.ID] = s
		fs = append(fs, ListingFindings(s, r)...)
		sc, err := ReadScan(dir, s.ID)
		switch {
		case errors.Is(err, ErrNoScan):
			unscanned = append(unscanned, s.ID)
		case err != nil:
			return nil, nil, err
		default:
			fs = append(fs, ScanFindings(s, sc)...)
		}
	}
	sortFindings(fs)
	js, _ := Judge(fs, byID, rf)
	return js, unscanned, nil
}
