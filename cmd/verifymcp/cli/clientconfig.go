package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/clientconfig"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/pipeline/batch"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/report/configreport"
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
	cmd.AddCommand(newConfigScanCmd(g), newConfigServeCmd(g))
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
shown), servers whose code is fetched from a registry at every launch (npx
and the other npm launchers, uvx, uv tool run, pipx run, unpinned images), how
each is reached, path arguments that grant the whole filesystem or home, and
plaintext HTTP off the machine. Each finding is one-sided: real when present,
its absence proves nothing. A config gets no score and is never called safe.

With no FILE, the known locations of this user's clients (and of the project
in the current directory) are read, and the report says which were found. A
file that is two locations (run from the home directory, ~/.cursor/mcp.json
is Cursor's user and project file) is read once.

--scan-servers scans every stdio server that runs a published package in the
sandbox, as batch does:
  npx [-y] [-p PKG] PKG[@SPEC], bunx, bun x, pnpm dlx, pnpx, yarn dlx, npm exec
      -> npm:PKG@SPEC (@latest when no version is given)
  uvx [OPTIONS] NAME[==V|@V], uvx --from REQ CMD, uv tool run ..., pipx run
      [--spec REQ] NAME -> pypi:NAME (the latest release) or pypi:NAME==V
Each is resolved as the client would at launch today (a pin stays a pin,
latest resolves now), started with the config's arguments (CMD or -p's bin as
the entry point) and the names of its environment (placeholder values, never
yours), resumable, each compared with its pin. Servers that are not package
targets are listed with why they were not scanned: local scripts, URL
servers, images, python -m MODULE (a module names no distribution), uvx
--with/extras/markers/another index, git or path sources.

Client variables in a server's arguments are replaced as the client would
replace them, by stand-ins in the sandbox, and the report lists each one:
${userHome}, ${env:HOME}, Claude Code's ${HOME} -> the sandbox user's home;
${workspaceFolder} -> the sandbox's scratch working directory; ${/} -> /;
Claude Code's ${VAR:-default} -> the default; ${env:NAME}, ${input:ID},
${VAR} -> a placeholder where the argument is a credential (--api-key
${input:key}). A variable with no honest stand-in (a path below the workspace
or home, an input or environment value that is not a credential, a variable
the client does not expand or this reader does not know) makes the server
not scanned, with why: a server is never blamed for a value the scanner made
up. A server started on stand-ins that then fails to start (a git server
given an empty directory as its repository) is shown with no score and why.
No value of your environment enters the sandbox.

--fail-on SEVERITY exits 1 when a config finding at or above it was raised
(and, with --scan-servers, a finding of a scanned package), after the report
is written. --ignore-file names accepted findings, as scan's does: for a
config finding, code is its cfg. code, subject the server's name and target
the package the server runs (npm:NAME, pypi:NAME, NAME@VERSION,
NAME==VERSION). An ignored finding is still reported, marked, and trips
nothing. Run it daily to learn when a server you run changed.

The same reading of a file, without --scan-servers, runs in a browser tab:
'verifymcp config serve' serves the page, which uploads nothing.

` + exitCodesHelp,
		Example: `  verifymcp config scan
  verifymcp config scan ~/.cursor/mcp.json .vscode/mcp.json --format json
  verifymcp config scan ~/.config/Claude/claude_desktop_config.json --scan-servers -j 2
  verifymcp config scan .vscode/mcp.json --scan-servers --data-dir /tmp/vm-store
  verifymcp config scan .mcp.json --fail-on high --ignore-file .verifymcp-ignore.yaml
  verifymcp config scan .mcp.json --format sarif -o config.sarif

  # An ignore file accepting one config finding (YAML):
  #   ignore:
  #     - code: cfg.credential.reference
  #       subject: github            # the server's name
  #       target: npm:@modelcontextprotocol/server-github
  #       reason: the token comes from the keychain
  #       by: alice
  #       expires: 2027-03-01`,
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
	bindGateFlags(fl, &f.batch.scan.gate)
	bindSandboxFlags(fl, &f.batch.scan)
	return cmd
}

func (g *globals) runConfigScan(ctx context.Context, paths []string, f *configScanFlags) error {
	format, err := checkFormat(report.OutputConfigReport, f.batch.scan.format)
	if err != nil {
		return err
	}
	if err := checkOutput(f.batch.scan.output); err != nil {
		return err
	}
	if f.batch.concurrency < 1 || f.batch.concurrency > 64 {
		return usagef("--concurrency must be between 1 and 64, not %d", f.batch.concurrency)
	}
	pol, err := g.policy(&f.batch.scan.gate)
	if err != nil {
		return err
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
		goos := g.goos
		if goos == "" {
			goos = runtime.GOOS
		}
		locations = clientconfig.KnownLocations(home, cwd, goos)
	}
	read, err := readConfigFiles(paths, locations, f.client)
	if err != nil {
		return err
	}
	files, findings, targets := read.Files, read.Findings, read.Targets
	var scans []configreport.ConfigScan
	var tripped []string
	var stopped error
	if f.scanServers {
		if scans, tripped, stopped, err = g.scanConfigServers(ctx, targets, f, pol); err != nil {
			return err
		}
	}
	rep, err := configreport.NewConfigReport(configreport.ConfigInput{Catalog: rubric.ConfigCatalog(), Locations: locations, Files: files,
		Findings: findings, Targets: targets, Scans: scans, ToolVersion: Version, Date: time.Now().UTC()})
	if err != nil {
		return err
	}
	configreport.ApplyPolicy(pol, &rep, tripped)
	if err := g.writeOutput(f.batch.scan.output, func(w io.Writer) error {
		return configreport.WriteConfigFor(w, format, rep, g.tableOptions(f.batch.scan.output))
	}); err != nil {
		return err
	}
	if stopped != nil {
		return stopped
	}
	if rep.Summary.Gate.Result == report.GateFailed {
		return gateError{tripped: rep.Summary.Gate.Tripped}
	}
	return nil
}

// readConfigFiles reads the named files (each must exist and parse) or,
// with none named, the known locations that exist. A file named twice (by
// two paths, or by a link) is read once, as its first name says: its
// findings are not doubled.
func readConfigFiles(paths []string, locations []clientconfig.Location, client string) (clientconfig.Disclosed, error) {
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
	d := clientconfig.Disclosed{Extensions: true}
	var read []os.FileInfo
	for _, t := range todo {
		st, err := os.Stat(t.path)
		if err != nil {
			return d, usagef("read %s: %v", t.path, errors.Unwrap(err))
		}
		if slices.ContainsFunc(read, func(r os.FileInfo) bool { return os.SameFile(r, st) }) {
			continue
		}
		read = append(read, st)
		data, err := os.ReadFile(t.path)
		if err != nil {
			return d, usagef("read %s: %v", t.path, errors.Unwrap(err))
		}
		if err := d.Read(clientconfig.Source{Path: t.path, Data: data, Client: t.client}); err != nil {
			return d, usageError{err}
		}
	}
	// Claude Desktop runs the extensions it installed whether or not its
	// config file exists (a user with extensions and no other server may
	// have none): with no file of its own, they are read where the file
	// would be.
	for _, l := range locations {
		if l.Found || l.Client != clientconfig.ClientClaudeDesktop {
			continue
		}
		dir := clientconfig.ExtensionsBeside(l.Path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		if err := d.ReadExtensions(dir); err != nil {
			return d, usageError{err}
		}
	}
	return d, nil
}

// standInFailure says whether a sandbox outcome is a failure to start
// or to speak MCP: what a server given a stand-in it cannot use does.
func standInFailure(outcome string) bool {
	switch evidence.Outcome(outcome) {
	case evidence.OutcomeStartCrashed, evidence.OutcomeHandshakeTimeout, evidence.OutcomeProtocolError:
		return true
	}
	return false
}

// placeholder is the value of every environment variable a config's
// server is scanned with: its names come from the config, its values
// never do.
const placeholder = clientconfig.Placeholder

// scanConfigServers scans the package targets as a batch and returns one
// row per target scanned, the findings of the scanned packages that trip
// pol's gate ("TARGET@VERSION: code subject"; none without --fail-on),
// and the batch's stop error (a target the environment kept from being
// scanned), which the command exits with once the report is written.
func (g *globals) scanConfigServers(ctx context.Context, targets []clientconfig.Target, f *configScanFlags, pol report.Policy) (scans []configreport.ConfigScan, tripped []string, stopped, err error) {
	mem, err := checkSandboxFlags(&f.batch.scan)
	if err != nil {
		return nil, nil, nil, err
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
			return nil, nil, nil, fmt.Errorf("config server %s (%s:%d): %w", t.Server, t.File, t.Line, err)
		}
		env := map[string]string{}
		for _, n := range t.EnvNames {
			env[n] = placeholder
		}
		lines = append(lines, batch.Line{Line: len(lines) + 1, Target: pt, Bin: t.Bin, Args: t.Args, Env: env})
		of = append(of, t)
	}
	if len(lines) == 0 {
		return []configreport.ConfigScan{}, nil, nil, nil
	}
	_, items, err := g.scanLines(ctx, "client configs", lines, &f.batch, mem)
	if err != nil {
		return nil, nil, nil, err
	}
	// A server started on the scanner's stand-ins for its variables that
	// then failed to start may have failed on them (an empty directory
	// for the project it expects): that outcome is not the package's.
	onStandIns := map[string]bool{}
	for i, it := range items {
		if len(of[i].Substituted) > 0 && it.RunID != "" && standInFailure(it.Outcome) {
			onStandIns[it.RunID] = true
		}
	}
	if pol.FailOn != "" {
		// The findings of every stored run, under the rubric in force,
		// gated as batch gates them.
		reps, err := g.batchReports(ctx, items)
		if err != nil {
			return nil, nil, nil, err
		}
		for i := range reps {
			if onStandIns[reps[i].Run.ID] {
				continue
			}
			if gate(pol, &reps[i]) != nil {
				rt := reps[i].Target
				pin := ecosystem.MustOf(rt.Ecosystem).Pin(rt.Name, rt.Version)
				for _, tr := range reps[i].Summary.Gate.Tripped {
					tripped = append(tripped, rt.Ecosystem+":"+pin+": "+tr)
				}
			}
		}
	}
	scans = make([]configreport.ConfigScan, 0, len(items))
	for i, it := range items {
		t := of[i]
		s := configreport.ConfigScan{Server: t.Server, File: t.File, Target: t.Target, Version: it.Version, RunID: it.RunID,
			Outcome: it.Outcome, Score: it.Score, Drift: configreport.ScanDriftNotCompared, Error: it.Error}
		switch {
		case it.Status == batch.StatusSkipped && it.RunID == "":
			// The same server in two files (or twice in one): scanned once.
			s.Outcome, s.Error = "skipped", it.SkipReason
		case s.Outcome == "":
			s.Outcome = "error"
		case onStandIns[it.RunID]:
			s.Score = nil
			s.Error = "started on the scanner's stand-ins (" + strings.Join(t.Substituted, "; ") + "), it ended " + it.Outcome +
				": a server that needs the user's own home or project fails on them, so this is not scored as the package's outcome; " +
				"scan " + t.Target + " with the arguments it needs (verifymcp scan " + t.Target + " --arg ...)"
		}
		if d := it.Drift; d != nil {
			switch d.State {
			case batch.DriftCompared:
				s.Drift = configreport.ScanDriftCompared
			case batch.DriftFirstScan:
				s.Drift = configreport.ScanDriftFirstScan
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
	return scans, tripped, batch.Stopped(items, "client configs", "scanned (run it again to retry them)"), nil
}
