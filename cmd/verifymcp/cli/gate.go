package cli

import (
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/verifymcp/verifymcp/report"
)

// gateFlags are --fail-on, --fail-on-unverified and --ignore-file.
type gateFlags struct {
	failOn     string
	unverified bool
	ignoreFile string
}

func bindGateFlags(fl *pflag.FlagSet, f *gateFlags) {
	fl.StringVar(&f.failOn, "fail-on", "", "exit 1 when a finding at or above this severity was raised: critical, high, medium or low (config fail_on); the report is written either way")
	fl.BoolVar(&f.unverified, "fail-on-unverified", false, "with --fail-on: let unverified markers (a signal that could not be checked, *.unverified) trip it too")
	fl.StringVar(&f.ignoreFile, "ignore-file", "", "accepted findings (code, subject, target, reason, by, expires), shown as ignored and not failing --fail-on (config ignore_file; default "+report.IgnoreFileName+" in the current directory when it exists)")
}

// policy reads the gate and the ignore file, before anything runs: a bad
// severity, an unreadable or malformed ignore file, or an entry that names
// no reason code of any rubric is bad input (exit 2).
func (g *globals) policy(f *gateFlags) (report.Policy, error) {
	cfg, _, err := loadConfig(g.config)
	if err != nil {
		return report.Policy{}, err
	}
	var p report.Policy
	if s := pick(f.failOn, cfg.FailOn); s != "" {
		if p.FailOn, err = report.ParseSeverity(s); err != nil {
			return report.Policy{}, usagef("--fail-on %v", err)
		}
	}
	if f.unverified && p.FailOn == "" {
		return report.Policy{}, usagef("--fail-on-unverified needs --fail-on SEVERITY")
	}
	p.Unverified = f.unverified
	path := pick(f.ignoreFile, cfg.IgnoreFile)
	if path == "" {
		if _, err := os.Stat(report.IgnoreFileName); err == nil {
			path = report.IgnoreFileName
		}
	}
	if path != "" {
		// The error names FILE:LINE and what is wrong, on one line.
		if p.Ignore, err = report.LoadIgnoreFile(path); err != nil {
			return report.Policy{}, usagef("ignore file %v", err)
		}
	}
	p.Now = time.Now()
	return p, nil
}

// gate applies the policy to a report and returns the gate's verdict as
// an error (exit 1) when it failed.
func gate(p report.Policy, rep *report.Report) error {
	p.Apply(rep)
	if rep.Summary.Gate.Result == report.GateFailed {
		return gateError{tripped: rep.Summary.Gate.Tripped}
	}
	return nil
}
