package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/clientconfig"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/pipeline/batch"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
)

type configScanFlags struct {
	batch       batchFlags
	scanServers bool
	client      string
}

func newClientConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Read MCP client config files: what they prove alone, and a sandboxed scan of every server in them",
	}
	cmd.AddCommand(newConfigScanCmd(g))
	return cmd
}

func newConfigScanCmd(g *globals) *cobra.Command {
	f := &configScanFlags{}
	cmd := &cobra.Command{
		Use:   "scan [FILE...]",
		Short: "Report what client config files disclose about their servers; with --scan-servers, scan each package server in the sandbox",
		Long: `Read MCP client configuration files (Claude Desktop, Claude Code, Cursor, VS Code,
Windsurf, Gemini CLI, Zed, Cline) and report what each file alone proves about
the servers it names: credentials held in it (literal or by reference, never
shown), servers whose code is fetched from a registry at every launch, how each
is reached, path arguments that grant the whole filesystem or home, and
plaintext HTTP off the machine. Each finding is one-sided: real when present,
its absence proves nothing. A config gets no score and is never called safe.

With no FILE, the known locations of this user's clients (and of the project
in the current directory) are read, and the report says which were found.

--scan-servers scans every stdio server whose command fetches an npm package
(npx, bunx, pnpm dlx, yarn dlx) in the sandbox, as batch does: resolved as the
client would at launch today (a pin stays a pin, @latest resolves now), started
with the config's arguments and the names of its environment (placeholder
values, never yours), resumable, each compared with its pin. Servers that are
not packages are listed with why they were not scanned. Run it daily to learn
when a server you run changed.

` + exitCodesHelp,
		Example: `  verifymcp config scan
  verifymcp config scan ~/.cursor/mcp.json .vscode/mcp.json --format json
  verifymcp config scan ~/.config/Claude/claude_desktop_config.json --scan-servers -j 2
  verifymcp config scan .mcp.json --format sarif -o config.sarif`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runConfigScan(cmd.Context(), args, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.scanServers, "scan-servers", false, "scan every package server of the files in the sandbox (a batch: progress, resume, --concurrency)")
	fl.StringVar(&f.client, "client", "", "read the FILEs as this client's format (claude-desktop, claude-code, cursor, vscode, windsurf, gemini, zed, cline); default: detected")
	fl.IntVarP(&f.batch.concurrency, "concurrency", "j", 1, "with --scan-servers: scans in flight at once")
	fl.BoolVar(&f.batch.rescan, "rescan", false, "with --scan-servers: scan a server again even when its result is stored (to compare it with its pin)")
	fl.StringVar(&f.batch.scan.format, "format", "table", "report format: table, json or sarif")
	fl.StringVarP(&f.batch.scan.output, "output", "o", "", "write the report to this file instead of stdout")
	bindSandboxFlags(fl, &f.batch.scan)
	return cmd
}

func (g *globals) runConfigScan(ctx context.Context, paths []string, f *configScanFlags) error {
	format, err := report.ParseConfigFormat(f.batch.scan.format)
	if err != nil {
		return usagef("--format %v", err)
	}
	if err := checkOutput(f.batch.scan.output); err != nil {
		return err
	}
	if f.batch.concurrency < 1 || f.batch.concurrency > 64 {
		return usagef("--concurrency must be between 1 and 64, not %d", f.batch.concurrency)
	}
	var locations []clientconfig.Location
	if len(paths) == 0 {
		home, err := os.UserHomeDir()
		if err != nil {
			return usagef("no FILE given and the home directory is unknown: %v", err)
		}
		cwd, err := os.Getwd()
		if err != nil {
			return err
		}
		locations = clientconfig.KnownLocations(home, cwd, runtime.GOOS)
	}
	files, err := readConfigFiles(paths, locations, f.client)
	if err != nil {
		return err
	}
	var findings []clientconfig.Finding
	var targets []clientconfig.Target
	for i := range files {
		findings = append(findings, clientconfig.Findings(&files[i])...)
		targets = append(targets, clientconfig.Targets(&files[i])...)
	}
	var scans []report.ConfigScan
	var stopped error
	if f.scanServers {
		if scans, stopped, err = g.scanConfigServers(ctx, targets, f); err != nil {
			return err
		}
	}
	rep, err := report.NewConfigReport(report.ConfigInput{Catalog: rubric.ConfigCatalog(), Locations: locations, Files: files,
		Findings: findings, Targets: targets, Scans: scans, ToolVersion: Version, Date: time.Now().UTC()})
	if err != nil {
		return err
	}
	if err := g.writeOutput(f.batch.scan.output, func(w io.Writer) error { return report.WriteConfig(w, format, rep) }); err != nil {
		return err
	}
	return stopped
}

// readConfigFiles reads the named files (each must exist and parse) or,
// with none named, the known locations that exist.
func readConfigFiles(paths []string, locations []clientconfig.Location, client string) ([]clientconfig.File, error) {
	type one struct{ path, client string }
	var todo []one
	for _, p := range paths {
		todo = append(todo, one{p, client})
	}
	for _, l := range locations {
		if l.Found {
			todo = append(todo, one{l.Path, l.Client})
		}
	}
	files := make([]clientconfig.File, 0, len(todo))
	for _, t := range todo {
		data, err := os.ReadFile(t.path)
		if err != nil {
			return nil, usagef("read %s: %v", t.path, errors.Unwrap(err))
		}
		c := t.client
		if c == "" {
			c = clientconfig.DetectClient(t.path, data)
		}
		f, err := clientconfig.ParseFile(t.path, data, c)
		if err != nil {
			return nil, usageError{err}
		}
		files = append(files, *f)
	}
	return files, nil
}

// placeholder is the value of every environment variable a config's
// server is scanned with: its names come from the config, its values
// never do.
const placeholder = "verifymcp-placeholder"

// scanConfigServers scans the package targets as a batch and returns one
// row per target scanned, and the batch's stop error (a target the
// environment kept from being scanned), which the command exits with
// once the report is written.
func (g *globals) scanConfigServers(ctx context.Context, targets []clientconfig.Target, f *configScanFlags) (scans []report.ConfigScan, stopped, err error) {
	mem, err := checkSandboxFlags(&f.batch.scan)
	if err != nil {
		return nil, nil, err
	}
	var lines []batch.Line
	var of []clientconfig.Target // of[i] is the target of lines[i]
	for _, t := range targets {
		if t.NotScanned != "" || t.Target == "" {
			continue
		}
		pt, err := pipeline.ParseTarget(t.Target)
		if err != nil {
			// Targets only names packages it validated; a refusal here is
			// the reader's bug, not the user's file.
			return nil, nil, fmt.Errorf("config server %s (%s:%d): %w", t.Server, t.File, t.Line, err)
		}
		env := map[string]string{}
		for _, n := range t.EnvNames {
			env[n] = placeholder
		}
		lines = append(lines, batch.Line{Line: len(lines) + 1, Target: pt, Args: t.Args, Env: env})
		of = append(of, t)
	}
	if len(lines) == 0 {
		return []report.ConfigScan{}, nil, nil
	}
	_, items, err := g.scanLines(ctx, "client configs", lines, &f.batch, mem)
	if err != nil {
		return nil, nil, err
	}
	scans = make([]report.ConfigScan, 0, len(items))
	for i, it := range items {
		t := of[i]
		s := report.ConfigScan{Server: t.Server, File: t.File, Target: t.Target, Version: it.Version, RunID: it.RunID,
			Outcome: it.Outcome, Score: it.Score, Drift: report.ScanDriftNotCompared, Error: it.Error}
		switch {
		case it.Status == batch.StatusSkipped && it.RunID == "":
			// The same server in two files (or twice in one): scanned once.
			s.Outcome, s.Error = "skipped", it.SkipReason
		case s.Outcome == "":
			s.Outcome = "error"
		}
		if d := it.Drift; d != nil {
			switch d.State {
			case batch.DriftCompared:
				s.Drift = report.ScanDriftCompared
			case batch.DriftFirstScan:
				s.Drift = report.ScanDriftFirstScan
			}
			for _, c := range d.Changes {
				if c.Surfaced {
					s.DriftSurfaced++
				}
			}
		}
		scans = append(scans, s)
	}
	sort.SliceStable(scans, func(a, b int) bool { return scans[a].File < scans[b].File })
	return scans, batch.Stopped(items, "client configs", "scanned (run it again to retry them)"), nil
}
