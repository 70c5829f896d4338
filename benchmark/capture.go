package benchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/contract/checks"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// A static capture is a synthetic fixture that is not run: the MCP
// listing a server sends, recorded in fixtures/ID/capture.json (and, for
// behaviour codes, what a scan watched, in fixtures/ID/bundle.json). The
// harness builds its evidence bundle with no engine and no network, and
// scores it with rubric.Evaluate exactly as a scan's bundle is scored, so
// the same capture under the same rubric gives the same codes on any
// machine.

// Files of a static capture, in fixtures/ID/.
const (
	captureFile       = "capture.json"
	captureBundleFile = "bundle.json"
)

// CaptureFormat is the format a capture.json names.
const CaptureFormat = "verifymcp.capture/v1"

// CaptureToolVersion is the tool version of every bundle built from a
// capture: fixed, so that the bundle does not depend on the build that
// scores it.
const CaptureToolVersion = "static-capture"

// CaptureSource is evidence.Target.Source of a bundle built from a capture.
const CaptureSource = "capture"

// NotAssessedCapture is the reason of every signal a static capture cannot
// give (install, session, behaviour unless recorded, supply chain, DNSSEC,
// judge, drift): not assessed, never clean and never a finding.
const NotAssessedCapture = "static capture"

// Forms of a case: how its evidence is obtained.
const (
	// FormCapture: a static capture, scored from recorded files with no
	// engine and no network; reproducible in full.
	FormCapture = "capture"
	// FormLive: a package installed and run in the sandbox (a fixture
	// packed by the harness, or a published package): it depends on the
	// world (the engine and image, reachability, timing).
	FormLive = "live"
)

// Form returns the form of c: FormCapture for a capture:ID@VERSION
// target, FormLive otherwise.
func (c Case) Form() string {
	if t, err := ParseTarget(c.Target); err == nil && t.Scheme == SchemeCapture {
		return FormCapture
	}
	return FormLive
}

// Capture is a static capture read and checked.
type Capture struct {
	// Name and Version are the package the capture stands for
	// (verifymcp-case-ID and the target's version).
	Name    string
	Version string
	// Recorded is when the capture was recorded: the run date of its
	// bundle.
	Recorded time.Time
	// Contract is the listing, read with the parsers the sandbox uses on
	// the wire.
	Contract *contract.Contract
	// Behavior is the recorded behaviour evidence (bundle.json), nil when
	// there is none.
	Behavior *evidence.Behavior
	// Integrity is the SRI sha512 of the capture's files (see
	// captureIntegrity).
	Integrity string
}

// captureWire is capture.json: the package it stands for, when it was
// recorded, and the results the server sent, as it sent them.
type captureWire struct {
	Format   string `json:"format"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Recorded string `json:"recorded"`
	// Note says where the listing comes from; free text.
	Note       string          `json:"note"`
	Initialize json.RawMessage `json:"initialize"`
	Tools      json.RawMessage `json:"tools/list"`
	Prompts    json.RawMessage `json:"prompts/list"`
	Resources  json.RawMessage `json:"resources/list"`
	Templates  json.RawMessage `json:"resources/templates/list"`
}

// captureKeys are the members capture.json may hold.
var captureKeys = []string{"format", "name", "version", "recorded", "note", "initialize",
	"tools/list", "prompts/list", "resources/list", "resources/templates/list"}

// captureBundleWire is bundle.json: the recorded behaviour evidence.
type captureBundleWire struct {
	Behavior *evidence.Behavior `json:"behavior"`
}

// ReadCapture reads and checks the static capture fixtures/ID of the
// corpus fsys for t, a capture:ID@VERSION target. Every error names the
// file, and the line where one is known.
func ReadCapture(fsys fs.FS, t TargetRef) (*Capture, error) {
	if t.Scheme != SchemeCapture {
		return nil, &flaw{ErrTarget, fmt.Errorf("%s is not a static capture", t)}
	}
	dir := path.Join(fixturesDir, t.Name)
	file := path.Join(dir, captureFile)
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, invalid("capture %s: %w", t.Name, err)
	}
	bad := func(raw []byte, format string, args ...any) error {
		where := file
		if line := lineOf(data, raw); line > 0 {
			where = fmt.Sprintf("%s:%d", file, line)
		}
		return invalid("%s: "+format, append([]any{where}, args...)...)
	}
	if err := checkMembers(data, captureKeys); err != nil {
		var se *memberError
		if errors.As(err, &se) {
			return nil, invalid("%s:%d: %s", file, lineAt(data, se.offset), se.msg)
		}
		return nil, invalid("%s", jsonError(file, data, err))
	}
	var w captureWire
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, invalid("%s", jsonError(file, data, err))
	}
	switch {
	case w.Format != CaptureFormat:
		return nil, bad([]byte(`"format"`), "format %q, want %q", w.Format, CaptureFormat)
	case w.Name != t.PackageName():
		return nil, bad([]byte(`"name"`), "names %q, want %q", w.Name, t.PackageName())
	case w.Version != t.Version:
		return nil, bad([]byte(`"version"`), "has version %q, but the target pins %s", w.Version, t.Version)
	}
	recorded, err := time.Parse(time.RFC3339, w.Recorded)
	if err != nil {
		return nil, bad([]byte(`"recorded"`), "recorded %q: want the date the listing was recorded, RFC 3339 (2026-12-06T00:00:00Z)", w.Recorded)
	}
	c := &contract.Contract{}
	if len(present(w.Initialize)) == 0 {
		return nil, bad(nil, "no initialize result: a capture records the server's answer to initialize (protocolVersion, serverInfo)")
	}
	var init struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
		Instructions    string          `json:"instructions"`
		Meta            json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(w.Initialize, &init); err != nil {
		return nil, bad(w.Initialize, "initialize: %v", err)
	}
	if init.ProtocolVersion == "" || len(present(init.ServerInfo)) == 0 {
		return nil, bad(w.Initialize, "initialize: the result names no protocolVersion or no serverInfo")
	}
	if c.ServerInfo, err = contract.ParseImplementation(init.ServerInfo); err != nil {
		return nil, bad(init.ServerInfo, "initialize: %v", err)
	}
	c.ProtocolVersion, c.Instructions = init.ProtocolVersion, init.Instructions
	c.Capabilities, c.Meta = present(init.Capabilities), present(init.Meta)
	if len(present(w.Tools)) == 0 {
		return nil, bad(nil, "no tools/list result: a capture records every page the server answered tools/list with ([] if it answered none)")
	}
	if err := addCaptureLists(c, &w, bad); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, tool := range c.Tools {
		if tool.Name == "" {
			return nil, bad([]byte(`"tools"`), "tools/list: a tool with no name")
		}
		if seen[tool.Name] {
			return nil, bad([]byte(`"`+tool.Name+`"`), "tools/list: tool %q is listed twice", tool.Name)
		}
		seen[tool.Name] = true
	}
	if err := contract.Normalize(c); err != nil {
		return nil, bad(nil, "%v", err)
	}
	cp := &Capture{Name: w.Name, Version: w.Version, Recorded: recorded.UTC(), Contract: c}
	files := [][]byte{data}
	bfile := path.Join(dir, captureBundleFile)
	switch bdata, err := fs.ReadFile(fsys, bfile); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, invalid("capture %s: %w", t.Name, err)
	default:
		dec := json.NewDecoder(bytes.NewReader(bdata))
		dec.DisallowUnknownFields()
		var bw captureBundleWire
		if err := dec.Decode(&bw); err != nil {
			return nil, invalid("%s (a capture's bundle.json holds only the recorded \"behavior\" of a scan)", jsonError(bfile, bdata, err))
		}
		if bw.Behavior == nil || len(bw.Behavior.Watches) == 0 {
			return nil, invalid("%s: no behaviour watched (behavior.watches is empty): leave the file out instead", bfile)
		}
		cp.Behavior = bw.Behavior
		files = append(files, bdata)
	}
	cp.Integrity = captureIntegrity(files)
	return cp, nil
}

// addCaptureLists adds to c the items of every list result page that w,
// a capture's capture.json, records; bad reports a problem at the line of
// the raw JSON it names.
func addCaptureLists(c *contract.Contract, w *captureWire, bad func(raw []byte, format string, args ...any) error) error {
	raws := map[string]json.RawMessage{"tools/list": w.Tools, "prompts/list": w.Prompts, "resources/list": w.Resources, "resources/templates/list": w.Templates}
	for _, method := range contract.ListMethods {
		raw, key := raws[method], contract.ListKey(method)
		if len(present(raw)) == 0 {
			continue
		}
		var pages []json.RawMessage
		if err := json.Unmarshal(raw, &pages); err != nil {
			return bad(raw, "%s: want the list of result pages the server sent, each an object with %q: %v", method, key, err)
		}
		for i, page := range pages {
			var p map[string]json.RawMessage
			if err := json.Unmarshal(page, &p); err != nil || p == nil {
				return bad(page, "%s page %d: not a result object", method, i+1)
			}
			member, ok := p[key]
			if !ok {
				return bad(page, "%s page %d: no %q member", method, i+1, key)
			}
			var items []json.RawMessage
			if err := json.Unmarshal(member, &items); err != nil {
				return bad(member, "%s page %d: %s: %v", method, i+1, key, err)
			}
			for _, it := range items {
				if err := contract.AddListItem(c, method, it); err != nil {
					return bad(it, "%s page %d: %v", method, i+1, err)
				}
			}
		}
	}
	return nil
}

// captureIntegrity is the SRI sha512 of a capture's files: capture.json's
// bytes, then, when there is one, a NUL and bundle.json's.
func captureIntegrity(files [][]byte) string {
	return Integrity(bytes.Join(files, []byte{0}))
}

// Bundle builds the evidence bundle of the capture: its contract (with the
// findings of this build's contract checks, stored as a scan stores them),
// its recorded behaviour when it has one, and every signal it cannot give
// not assessed, for the reason "static capture". Its run id, date and tool
// version come from the capture, so the bundle is the same on any machine.
func (cp *Capture) Bundle() *evidence.Bundle {
	b := &evidence.Bundle{
		SchemaVersion: evidence.SchemaVersion,
		Run: evidence.Run{ID: "capture:" + strings.TrimPrefix(cp.Name, FixturePackagePrefix) + "@" + cp.Version,
			Date: cp.Recorded, Tool: evidence.Tool{Name: "verifymcp", Version: CaptureToolVersion}},
		Target: evidence.Target{Ecosystem: CaptureSource, Name: cp.Name, Version: cp.Version, Requested: "capture:" + strings.TrimPrefix(cp.Name, FixturePackagePrefix) + "@" + cp.Version,
			Source: CaptureSource, Integrity: cp.Integrity, Args: []string{}, EnvNames: []string{}},
		Signals: map[string]evidence.Signal{},
	}
	notAssessed := evidence.Signal{State: evidence.StateNotAssessed, Reason: NotAssessedCapture}
	for _, name := range []string{evidence.SignalRegistry, evidence.SignalRegistryMeta, evidence.SignalInstall, evidence.SignalSession,
		evidence.SignalBehavior, evidence.SignalDrift} {
		b.Signals[name] = notAssessed
	}
	thirdParty := notAssessed
	thirdParty.ThirdParty = true
	for _, name := range []string{evidence.SignalOSV, evidence.SignalSocket, evidence.SignalGitHub, evidence.SignalDNSSEC,
		evidence.SignalJudge, evidence.SignalMCPRegistry} {
		b.Signals[name] = thirdParty
	}
	// A fresh copy of the contract each time: the bundle is the scorer's.
	var c contract.Contract
	raw, _ := json.Marshal(cp.Contract)
	_ = json.Unmarshal(raw, &c)
	b.Contract = &c
	b.Signals[evidence.SignalContract] = evidence.Signal{State: evidence.StateObserved}
	fs := checks.Check(b.Contract)
	b.ContractChecks = &evidence.ContractChecks{Version: checks.Version, Digest: checks.Digest(), Findings: make([]evidence.CheckFinding, 0, len(fs))}
	for _, f := range fs {
		b.ContractChecks.Findings = append(b.ContractChecks.Findings, evidence.CheckFinding{Code: f.Code, Severity: string(f.Severity),
			Kind: f.Kind, Subject: f.Subject, Field: f.Field, Evidence: f.Evidence, Decoded: f.Decoded, Message: f.Message})
	}
	if cp.Behavior != nil {
		var bh evidence.Behavior
		raw, _ := json.Marshal(cp.Behavior)
		_ = json.Unmarshal(raw, &bh)
		b.Behavior = &bh
		var ms int64
		for _, w := range bh.Watches {
			ms += w.WatchedMS
		}
		b.Signals[evidence.SignalBehavior] = evidence.Signal{State: evidence.StateObserved, Reason: "recorded with the static capture", DurationMS: ms}
	}
	return b
}

// ScoreCapture scores the capture under rb, as a scan's bundle is scored.
func ScoreCapture(cp *Capture, rb *rubric.Rubric) Observed {
	b := cp.Bundle()
	return Observe(b, rubric.Evaluate(b, rb))
}

// WithCaptures returns a ScanFunc that scores the static captures itself,
// under rb, with no engine and no network, and hands every other target to
// live. live may be nil when no case is live; a live target is then an
// error of its case.
func WithCaptures(live ScanFunc, rb *rubric.Rubric) ScanFunc {
	return func(ctx context.Context, c Case, t ScanTarget) (Observed, error) {
		if t.Capture != nil {
			return ScoreCapture(t.Capture, rb), nil
		}
		if live == nil {
			return Observed{}, fmt.Errorf("case %s is live (%s): this run has no scanner", c.ID, c.Target)
		}
		return live(ctx, c, t)
	}
}

// checkCapture checks that a capture case's capture exists and agrees with
// its target.
func (c Case) checkCapture(fsys fs.FS) error {
	t, err := ParseTarget(c.Target)
	if err != nil || t.Scheme != SchemeCapture {
		return nil // Validate reported it
	}
	if _, err := ReadCapture(fsys, t); err != nil {
		return c.errorf("target", err)
	}
	return nil
}

// present returns raw, or nil when it is absent or null.
func present(raw json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	return raw
}

// memberError is a top-level member of a capture that is not allowed.
type memberError struct {
	offset int64
	msg    string
}

func (e *memberError) Error() string { return e.msg }

// checkMembers checks that data is one JSON object whose members are among
// allowed, each once.
func checkMembers(data []byte, allowed []string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return &memberError{0, "not a JSON object"}
	}
	seen := map[string]bool{}
	for dec.More() {
		off := dec.InputOffset()
		// The key starts after the blanks and the comma before it.
		for off < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,"), data[off]) >= 0 {
			off++
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		switch {
		case !slices.Contains(allowed, key):
			return &memberError{off, fmt.Sprintf("unknown member %q (a capture holds %s)", key, strings.Join(allowed, ", "))}
		case seen[key]:
			return &memberError{off, fmt.Sprintf("member %q is given twice", key)}
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	if dec.More() {
		return &memberError{dec.InputOffset(), "data after the capture's object"}
	}
	return nil
}

// jsonError says where in file a JSON syntax or type error is: file:line,
// or the file alone when the error has no offset.
func jsonError(file string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s:%d: %w", file, lineAt(data, se.Offset), err)
	case errors.As(err, &te):
		return fmt.Errorf("%s:%d: %w", file, lineAt(data, te.Offset), err)
	}
	return fmt.Errorf("%s: %w", file, err)
}

// lineAt returns the line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// lineOf returns the line where raw first occurs in data, 0 when raw is
// empty or absent.
func lineOf(data, raw []byte) int {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	i := bytes.Index(data, raw)
	if i < 0 {
		return 0
	}
	return lineAt(data, int64(i))
}
