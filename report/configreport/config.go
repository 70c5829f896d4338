// Package configreport is the config report: what client configuration
// files alone prove about the servers they name (config scan, config
// serve, the page), built from the model of package clientconfig and
// written as a table, JSON (its schema is report/schema/config.v1.schema.json)
// or SARIF. The package report knows nothing of it.
package configreport

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/clientconfig"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
)

// ConfigSchemaVersion identifies the JSON of a config report; its JSON
// Schema is report/schema/config.v1.schema.json.
const ConfigSchemaVersion = "verifymcp.config/v1"

// The drift states of a scanned server.
const (
	// ScanDriftCompared: the contract was compared with its identity's pin.
	ScanDriftCompared = "compared"
	// ScanDriftFirstScan: the identity had no pin; this scan pinned it.
	ScanDriftFirstScan = "first_scan"
	// ScanDriftNotCompared: no contract to compare (the scan failed before
	// a listing, or drift was not assessed).
	ScanDriftNotCompared = "not_compared"
)

// ConfigReport is what the config command prints: what client
// configuration files alone prove about the servers they name, the package
// targets those servers fetch and, on request, each target's scan. It has
// no score and never says a configuration is safe: a finding is real where
// it is reported, and no finding proves nothing. Lists are never nil.
type ConfigReport struct {
	SchemaVersion string        `json:"schema_version"`
	Tool          report.Tool   `json:"tool"`
	Run           ConfigRun     `json:"run"`
	Catalog       ConfigCatalog `json:"catalog"`
	// Locations are the places looked at for configuration files; [] when
	// the files were named explicitly.
	Locations []clientconfig.Location `json:"locations"`
	Files     []ConfigFile            `json:"files"`
	// Findings are sorted by severity, highest first, then file, line and
	// code.
	Findings []ConfigFinding `json:"findings"`
	// Targets are the package targets of the stdio servers, and the
	// servers that are not package targets with why.
	Targets []clientconfig.Target `json:"targets"`
	// Scans are the scans of the targets; [] when none was requested.
	Scans   []ConfigScan  `json:"scans"`
	Summary ConfigSummary `json:"summary"`
}

// ConfigRun says when the configuration was read.
type ConfigRun struct {
	Date string `json:"date"` // UTC, RFC 3339
}

// ConfigCatalog identifies the config findings catalog the findings come
// from.
type ConfigCatalog struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
}

// ConfigFile is one configuration file as read.
type ConfigFile struct {
	Path    string                 `json:"path"`
	Client  string                 `json:"client"`
	Servers []ConfigServer         `json:"servers"`
	Inputs  []clientconfig.Input   `json:"inputs"`
	Unknown []clientconfig.Unknown `json:"unknown"`
}

// ConfigServer is one server of a file. Its environment and headers show
// each setting's kind and masked form, never a value.
type ConfigServer struct {
	Name string `json:"name"`
	// Project is the project directory of a server a client keeps per
	// project (Claude Code's ~/.claude.json); "" for the others.
	Project   string          `json:"project"`
	Line      int             `json:"line"`
	Transport string          `json:"transport"`
	Command   string          `json:"command"`
	Args      []string        `json:"args"`
	Cwd       string          `json:"cwd"`
	URL       string          `json:"url"`
	Env       []ConfigSetting `json:"env"`
	Headers   []ConfigSetting `json:"headers"`
	// Settings are the string values an editor passes to an extension
	// that provides the server (Zed's context server settings).
	Settings []ConfigSetting `json:"settings"`
	Disabled bool            `json:"disabled"`
}

// ConfigSetting is one environment variable or header of a server.
type ConfigSetting struct {
	Key    string `json:"key"`
	Line   int    `json:"line"`
	Kind   string `json:"kind"`
	Masked string `json:"masked"`
}

// ConfigFinding is a cfg. finding with its catalog entry.
type ConfigFinding struct {
	clientconfig.Finding
	Severity    string `json:"severity"`
	Description string `json:"description"`
	Remediation string `json:"remediation"`
	// Ignored is set when an ignore file accepts the finding: it is
	// still reported, and does not trip --fail-on.
	Ignored *report.Ignored `json:"ignored"`
}

// ConfigScan is the scan of one server's package target. Its score is the
// package's, under the package rubric, never the configuration's.
type ConfigScan struct {
	Server string `json:"server"`
	File   string `json:"file"`
	Target string `json:"target"`
	// Version is the exact version the target resolved to ("" when it did
	// not resolve).
	Version string `json:"version"`
	RunID   string `json:"run_id"`
	// Outcome is the sandbox outcome (ok, install_failed, ...) or "error"
	// when the scan did not complete.
	Outcome string `json:"outcome"`
	// Score is the package's composite score; nil when there is none.
	Score *float64 `json:"score"`
	// Drift is ScanDriftCompared, ScanDriftFirstScan or ScanDriftNotCompared.
	Drift string `json:"drift"`
	// DriftSurfaced counts the surfaced changes from the pin.
	DriftSurfaced int    `json:"drift_surfaced"`
	Error         string `json:"error"`
}

// ConfigSummary counts what was read and found, and says what it means.
type ConfigSummary struct {
	Files   int `json:"files"`
	Servers int `json:"servers"`
	// Findings counts the findings by severity, ignored ones left out;
	// every severity is present. Ignored counts those.
	Findings map[string]int `json:"findings"`
	Ignored  int            `json:"ignored"`
	// Expired lists ignore entries that no longer apply.
	Expired []string `json:"expired"`
	// Gate is --fail-on's verdict over the config findings and, when the
	// servers were scanned, over their packages' findings.
	Gate      report.Gate `json:"gate"`
	Statement string      `json:"statement"`
}

// ConfigInput is what a config report is built from.
type ConfigInput struct {
	Catalog *rubric.ConfigCatalogFile
	// Locations are the places looked at; nil when files were named.
	Locations []clientconfig.Location
	Files     []clientconfig.File
	Findings  []clientconfig.Finding
	Targets   []clientconfig.Target
	// Scans are the scans of the targets, when requested.
	Scans       []ConfigScan
	ToolVersion string
	Date        time.Time
}

// NewConfigReport builds a config report. A finding whose code is not in
// the catalog, or a scan with an unknown drift state, is an error: the
// report would carry a claim nobody catalogued.
func NewConfigReport(in ConfigInput) (ConfigReport, error) {
	if in.Catalog == nil {
		return ConfigReport{}, fmt.Errorf("report: config report without a catalog")
	}
	r := ConfigReport{
		SchemaVersion: ConfigSchemaVersion,
		Tool:          report.Tool{Name: "verifymcp", Version: in.ToolVersion},
		Run:           ConfigRun{Date: in.Date.UTC().Format(time.RFC3339)},
		Catalog:       ConfigCatalog{Version: in.Catalog.Version, Hash: in.Catalog.Hash},
		Locations:     slices.Clone(nonNil(in.Locations)),
		Files:         make([]ConfigFile, 0, len(in.Files)),
		Findings:      make([]ConfigFinding, 0, len(in.Findings)),
		Targets:       make([]clientconfig.Target, 0, len(in.Targets)),
		Scans:         slices.Clone(nonNil(in.Scans)),
	}
	for _, f := range in.Files {
		cf := ConfigFile{Path: f.Path, Client: f.Client, Servers: make([]ConfigServer, 0, len(f.Servers)),
			Inputs: slices.Clone(nonNil(f.Inputs)), Unknown: slices.Clone(nonNil(f.Unknown))}
		for _, s := range f.Servers {
			cs, err := configServer(s)
			if err != nil {
				return ConfigReport{}, err
			}
			cf.Servers = append(cf.Servers, cs)
		}
		r.Files = append(r.Files, cf)
	}
	for _, f := range in.Findings {
		d, ok := in.Catalog.Code(f.Code)
		if !ok {
			return ConfigReport{}, fmt.Errorf("report: finding %s (%s:%d) is not in config catalog v%s", f.Code, f.File, f.Line, in.Catalog.Version)
		}
		r.Findings = append(r.Findings, ConfigFinding{Finding: f, Severity: string(d.Severity), Description: d.Description, Remediation: d.Remediation})
	}
	sortConfigFindings(r.Findings)
	for _, t := range in.Targets {
		t.Args, t.EnvNames = slices.Clone(nonNil(t.Args)), slices.Clone(nonNil(t.EnvNames))
		r.Targets = append(r.Targets, t)
	}
	for _, s := range r.Scans {
		switch s.Drift {
		case ScanDriftCompared, ScanDriftFirstScan, ScanDriftNotCompared:
		default:
			return ConfigReport{}, fmt.Errorf("report: scan of %s: drift state %q is not %s, %s or %s", s.Target, s.Drift,
				ScanDriftCompared, ScanDriftFirstScan, ScanDriftNotCompared)
		}
	}
	r.Summary = configSummary(r)
	return r, nil
}

// configServer is s as a config report shows it. It goes through s's own
// JSON form, which is what clientconfig lets any output show (masked
// settings, arguments and URL; no value), so the report can carry nothing
// the model does not serialise.
func configServer(s clientconfig.Server) (ConfigServer, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return ConfigServer{}, fmt.Errorf("report: server %s: %w", s.Name, err)
	}
	var cs ConfigServer
	if err := json.Unmarshal(data, &cs); err != nil {
		return ConfigServer{}, fmt.Errorf("report: server %s: %w", s.Name, err)
	}
	cs.Args, cs.Env, cs.Headers, cs.Settings = nonNil(cs.Args), nonNil(cs.Env), nonNil(cs.Headers), nonNil(cs.Settings)
	return cs, nil
}

// sortConfigFindings orders findings by severity, highest first, then by
// file, line, code, server and key.
func sortConfigFindings(fs []ConfigFinding) {
	slices.SortStableFunc(fs, func(a, b ConfigFinding) int {
		if d := rubric.Severity(b.Severity).Rank() - rubric.Severity(a.Severity).Rank(); d != 0 {
			return d
		}
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if c := strings.Compare(a.Code, b.Code); c != 0 {
			return c
		}
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
}

func configSummary(r ConfigReport) ConfigSummary {
	s := ConfigSummary{Files: len(r.Files), Findings: map[string]int{}, Expired: []string{},
		Gate: report.Gate{Result: report.GateNotSet, Tripped: []string{}}}
	for _, f := range r.Files {
		s.Servers += len(f.Servers)
	}
	for _, sev := range rubric.Severities() {
		s.Findings[string(sev)] = 0
	}
	for _, f := range r.Findings {
		if f.Ignored != nil {
			s.Ignored++
			continue
		}
		s.Findings[f.Severity]++
	}
	s.Statement = ConfigStatement(len(r.Files), len(r.Findings))
	return s
}

// ApplyPolicy marks the config findings p's ignore file accepts and
// evaluates p's gate over the others and over tripped: the findings of
// the scanned servers' packages that tripped it (each package report
// gated by p.Apply), as "TARGET: code subject". An entry names a config
// finding by its code (cfg.credential.literal), its subject is the
// server's name and its target the package the server runs (npm:NAME or
// pypi:NAME, any version; NAME@VERSION or NAME==VERSION only where the
// file pins that version). A config finding trips the gate as "code
// server (file:line)".
func ApplyPolicy(p report.Policy, r *ConfigReport, tripped []string) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	targets := map[string]*clientconfig.Target{}
	for i := range r.Targets {
		t := &r.Targets[i]
		targets[t.File+"\x00"+t.Server] = t
	}
	expired := []string{}
	if ig := p.Ignore; ig != nil {
		used := map[int]bool{}
		for i := range r.Findings {
			f := &r.Findings[i]
			f.Ignored = nil
			for j, e := range ig.Entries {
				if !configMatches(e, f, targets[f.File+"\x00"+f.Server]) {
					continue
				}
				if e.ExpiredAt(now) {
					if !used[j] {
						expired = append(expired, fmt.Sprintf("%s:%d: %s expired on %s: no longer applied", ig.Path, e.Line, strings.TrimSpace(e.Code+" "+e.Subject), e.Expires))
					}
					used[j] = true
					continue
				}
				f.Ignored = &report.Ignored{Reason: e.Reason, By: e.By, Expires: e.Expires, File: ig.Path, Line: e.Line}
				break
			}
		}
	}
	s := configSummary(*r)
	s.Expired = expired
	s.Gate = report.Gate{FailOn: string(p.FailOn), Unverified: p.Unverified, Result: report.GateNotSet, Tripped: []string{}}
	if p.FailOn != "" {
		for _, f := range r.Findings {
			if f.Ignored == nil && rubric.Severity(f.Severity).Rank() >= p.FailOn.Rank() {
				s.Gate.Tripped = append(s.Gate.Tripped, fmt.Sprintf("%s %s (%s:%d)", f.Code, f.Server, f.File, f.Line))
			}
		}
		s.Gate.Tripped = append(s.Gate.Tripped, tripped...)
		s.Gate.Result = report.GatePassed
		if len(s.Gate.Tripped) > 0 {
			s.Gate.Result = report.GateFailed
		}
	}
	r.Summary = s
}

// configMatches says whether ignore entry e names config finding f, whose
// server's target is t (nil when the server is not in the targets).
func configMatches(e report.IgnoreEntry, f *ConfigFinding, t *clientconfig.Target) bool {
	if f.Code != e.Code || (e.Subject != "" && f.Server != e.Subject) {
		return false
	}
	return e.Target == "" || (t != nil && t.IsPackage(e.Target))
}

// ConfigStatement is what a config report says of itself, for files files
// and findings findings: what the findings are, and what their absence
// means, which is nothing about the servers.
func ConfigStatement(files, findings int) string {
	const noScore = " A configuration gets no score."
	switch {
	case files == 0:
		return "No configuration file was read; nothing is claimed about any server." + noScore
	case findings == 0 && files == 1:
		return "This file disclosed nothing of these kinds; that proves nothing about the servers it names." + noScore
	case findings == 0:
		return "These " + strconv.Itoa(files) + " files disclosed nothing of these kinds; that proves nothing about the servers they name." + noScore
	case files == 1:
		return "Each finding is shown by the file itself and is real where it is reported. " +
			"Where the file disclosed nothing of a kind, that proves nothing about the servers it names." + noScore
	default:
		return "Each finding is shown by the file it names and is real where it is reported. " +
			"Where these " + strconv.Itoa(files) + " files disclosed nothing of a kind, that proves nothing about the servers they name." + noScore
	}
}

// WriteConfig writes a config report in format f: a table, indented JSON
// (lists present as [], never omitted) or SARIF 2.1.0, its files placed
// relative to the working directory (WriteConfigSARIF with
// report.DefaultSARIFOptions).
func WriteConfig(w io.Writer, f report.Format, r ConfigReport) error {
	r = configNonNil(r)
	asJSON := func() error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		// Masked forms read "<literal, 40 characters>": kept as written.
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	}
	return report.WriteFormat(f, asJSON, func() error { return writeConfigTable(w, r) }, func() error {
		return WriteConfigSARIF(w, r, report.DefaultSARIFOptions())
	})
}

// configNonNil makes every list of r present, for a report built by hand.
func configNonNil(r ConfigReport) ConfigReport {
	r.Locations, r.Findings, r.Targets, r.Scans = nonNil(r.Locations), nonNil(r.Findings), nonNil(r.Targets), nonNil(r.Scans)
	files := make([]ConfigFile, 0, len(r.Files))
	for _, f := range r.Files {
		f.Inputs, f.Unknown = nonNil(f.Inputs), nonNil(f.Unknown)
		servers := make([]ConfigServer, 0, len(f.Servers))
		for _, s := range f.Servers {
			s.Args, s.Env, s.Headers, s.Settings = nonNil(s.Args), nonNil(s.Env), nonNil(s.Headers), nonNil(s.Settings)
			servers = append(servers, s)
		}
		f.Servers = servers
		files = append(files, f)
	}
	r.Files = files
	targets := make([]clientconfig.Target, 0, len(r.Targets))
	for _, t := range r.Targets {
		t.Args, t.EnvNames = nonNil(t.Args), nonNil(t.EnvNames)
		targets = append(targets, t)
	}
	r.Targets = targets
	if r.Summary.Findings == nil {
		r.Summary.Findings = map[string]int{}
	}
	r.Summary.Expired, r.Summary.Gate.Tripped = nonNil(r.Summary.Expired), nonNil(r.Summary.Gate.Tripped)
	if r.Summary.Gate.Result == "" {
		r.Summary.Gate.Result = report.GateNotSet
	}
	return r
}

// nonNil is s, or an empty list when s is nil: every list of the JSON is
// present.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
