package configreport

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/clientconfig"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
)

// The report's table helpers, by the names its tables use.
var (
	clean  = report.Clean
	orDash = report.OrDash
	plural = report.Plural
	num    = report.Num
	yesNo  = report.YesNo
)

// WriteConfigFor writes a config report as WriteConfig does, its table
// wrapped to o.Width (0: DefaultWidth) with a hanging indent, never cut;
// the other formats as WriteConfig writes them.
func WriteConfigFor(w io.Writer, f report.Format, r ConfigReport, o report.TableOptions) error {
	if f != report.FormatTable {
		return WriteConfig(w, f, r)
	}
	if err := writeTable(report.NewTable(w, report.TableWidth(o)), configNonNil(r)); err != nil {
		return fmt.Errorf("report: write config table: %w", err)
	}
	return nil
}

func writeConfigTable(w io.Writer, r ConfigReport) error {
	if err := writeTable(report.NewTable(w, 0), r); err != nil {
		return fmt.Errorf("report: write config table: %w", err)
	}
	return nil
}

// writeTable writes a config report's table, wrapped to the table's
// width unless it is 0.
func writeTable(t *report.Table, r ConfigReport) error {
	t.Line(fmt.Sprintf("verifymcp config report (%s)", r.SchemaVersion))
	t.Grid([][]string{
		{"run", r.Run.Date + "  " + clean(r.Tool.Name) + " " + clean(r.Tool.Version)},
		{"catalog", "config findings v" + clean(r.Catalog.Version) + "  " + clean(r.Catalog.Hash)},
	})
	if len(r.Locations) > 0 {
		t.Line("")
		t.Line("LOCATIONS")
		rows := [][]string{{"CLIENT", "SCOPE", "STATE", "PATH"}}
		for _, l := range r.Locations {
			found := "not found"
			if l.Found {
				found = "found"
			}
			rows = append(rows, []string{clean(orDash(l.ClientName)), clean(orDash(l.Scope)), found, clean(l.Path)})
		}
		t.Grid(rows)
		for _, l := range r.Locations {
			for _, a := range l.Also {
				line := fmt.Sprintf("  %s is also %s's %s location", clean(l.Path), clean(orDash(a.ClientName)), clean(a.Scope))
				if a.Path != l.Path {
					line += " (" + clean(a.Path) + ")"
				}
				if l.Found {
					line += ": one file, read once"
				}
				t.Line(line)
			}
		}
	}
	for _, f := range r.Files {
		t.Line("")
		t.Line(fmt.Sprintf("FILE %s (%s, %s)", clean(f.Path), clean(orDash(f.Client)), plural(len(f.Servers), "server")))
		if len(f.Servers) > 0 {
			rows := [][]string{{"SERVER", "TRANSPORT", "LINE", "COMMAND OR URL"}}
			for _, s := range f.Servers {
				name := clean(s.Name)
				if s.Disabled {
					name += " (disabled)"
				}
				rows = append(rows, []string{name, clean(orDash(s.Transport)), strconv.Itoa(s.Line), serverLaunch(s)})
			}
			t.Grid(rows)
		} else {
			t.Line("  no servers")
		}
		for _, in := range f.Inputs {
			kind := "not a password"
			if in.Password {
				kind = "password"
			}
			t.Line(fmt.Sprintf("  input %s (%s, %s) line %d", clean(in.ID), clean(orDash(in.Type)), kind, in.Line))
		}
		for _, u := range f.Unknown {
			t.Hang(fmt.Sprintf("  not understood, line %d: %s: ", u.Line, clean(u.Path)), clean(u.Why), 4)
		}
	}
	writeFindings(t, r)
	writeTargets(t, r)
	if len(r.Scans) > 0 {
		t.Line("")
		t.Line("SCANS (each score is the package's, under the package rubric, never the configuration's)")
		rows := [][]string{{"SERVER", "TARGET", "VERSION", "OUTCOME", "SCORE", "DRIFT", "RUN"}}
		for _, s := range r.Scans {
			score := "-"
			if s.Score != nil {
				score = num(*s.Score)
			}
			drift := clean(s.Drift)
			if s.Drift == ScanDriftCompared {
				drift += " (" + plural(s.DriftSurfaced, "surfaced change") + ")"
			}
			rows = append(rows, []string{clean(s.Server), clean(s.Target), clean(orDash(s.Version)), clean(s.Outcome), score, drift, clean(orDash(s.RunID))})
		}
		t.Grid(rows)
		for _, s := range r.Scans {
			if s.Error != "" {
				t.Hang(fmt.Sprintf("  %s: ", clean(s.Server)), clean(s.Error), 4)
			}
		}
	}
	writeGate(t, r.Summary)
	t.Line("")
	t.Line("SUMMARY")
	t.Line(fmt.Sprintf("  %s, %s, %s", plural(r.Summary.Files, "file"), plural(r.Summary.Servers, "server"), plural(len(r.Findings), "finding")))
	t.Para("  ", r.Summary.Statement)
	return t.Err()
}

// serverLaunch is how a server is started or reached: its command and
// arguments, or its URL.
func serverLaunch(s ConfigServer) string {
	if s.Command == "" {
		return clean(orDash(s.URL))
	}
	parts := []string{clean(s.Command)}
	for _, a := range s.Args {
		if a == "" || strings.ContainsAny(a, " \"'") {
			a = strconv.Quote(a)
		}
		parts = append(parts, clean(a))
	}
	return strings.Join(parts, " ")
}

// writeGate prints --fail-on's verdict and the ignore file's effect,
// when a policy was applied.
func writeGate(t *report.Table, s ConfigSummary) {
	t.Gate(s.Gate, s.Expired, "only what the files disclose and the checks that ran",
		plural(s.Ignored, "finding")+" ignored by the ignore file, listed under FINDINGS as ignored", s.Ignored)
}

func writeFindings(t *report.Table, r ConfigReport) {
	t.Line("")
	counts := make([]string, 0, len(rubric.Severities()))
	for _, s := range rubric.Severities() {
		counts = append(counts, fmt.Sprintf("%s %d", s, r.Summary.Findings[string(s)]))
	}
	if r.Summary.Ignored > 0 {
		counts = append(counts, fmt.Sprintf("ignored %d", r.Summary.Ignored))
	}
	t.Line(fmt.Sprintf("FINDINGS (%d)  %s", len(r.Findings), strings.Join(counts, ", ")))
	if len(r.Findings) == 0 {
		t.Line("  none of the kinds the config catalog lists")
		return
	}
	last := ""
	for _, f := range r.Findings {
		if f.Severity != last {
			t.Line("  " + strings.ToUpper(clean(f.Severity)))
			last = f.Severity
		}
		head := fmt.Sprintf("    %s:%d  %s  %s", clean(f.File), f.Line, clean(f.Server), clean(f.Code))
		if f.Key != "" {
			head += "  " + clean(f.Key)
		}
		if ig := f.Ignored; ig != nil {
			head += "  (ignored until " + clean(ig.Expires) + " by " + clean(ig.By) + ": " + clean(ig.Reason) + "; " + clean(ig.File) + ":" + strconv.Itoa(ig.Line) + ")"
		}
		t.Hang("    ", strings.TrimPrefix(head, "    "), 8)
		if f.Message != "" {
			t.Para("      ", clean(f.Message))
		}
		if f.Evidence != "" {
			t.Para("      evidence: ", clean(f.Evidence))
		}
	}
}

func writeTargets(t *report.Table, r ConfigReport) {
	t.Line("")
	var scannable, not []clientconfig.Target
	for _, tg := range r.Targets {
		if tg.NotScanned != "" || tg.Target == "" {
			not = append(not, tg)
		} else {
			scannable = append(scannable, tg)
		}
	}
	t.Line(fmt.Sprintf("TARGETS (%d scannable, %d not)", len(scannable), len(not)))
	if len(r.Targets) == 0 {
		t.Line("  none")
		return
	}
	if len(scannable) > 0 {
		rows := [][]string{{"SERVER", "TARGET", "SPEC", "PINNED", "BIN", "ARGS", "ENV", "AT"}}
		for _, tg := range scannable {
			rows = append(rows, []string{clean(tg.Server), clean(tg.Target), clean(orDash(tg.Spec)), yesNo(tg.Pinned), clean(orDash(tg.Bin)),
				clean(orDash(strings.Join(tg.Args, " "))), clean(orDash(strings.Join(tg.EnvNames, " "))), fmt.Sprintf("%s:%d", clean(tg.File), tg.Line)})
		}
		t.Grid(rows)
		for _, tg := range scannable {
			for _, sub := range tg.Substituted {
				t.Line(fmt.Sprintf("  %s: %s", clean(tg.Server), clean(sub)))
			}
		}
	}
	if len(not) > 0 {
		t.Line("  not scanned:")
		for _, tg := range not {
			why := tg.NotScanned
			if why == "" {
				why = "not a package target"
			}
			t.Hang(fmt.Sprintf("    %s (%s:%d): ", clean(tg.Server), clean(tg.File), tg.Line), clean(why), 6)
		}
	}
}
