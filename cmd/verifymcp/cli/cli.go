// Package cli is the verifymcp command line: flags, subcommands, exit codes
// and wiring. main calls Run; tests call it in-process with their own
// writers.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
)

// Version is the tool version, set at build time with
// -ldflags "-X github.com/verifymcp/verifymcp/cmd/verifymcp/cli.Version=...".
var Version = "0.1.0-dev"

// globals are the flags every command shares.
type globals struct {
	dataDir string
	config  string
	verbose bool
	quiet   bool
	stdout  io.Writer
	stderr  io.Writer
	log     *slog.Logger
	// goos is the operating system whose client locations config scan
	// reads: runtime.GOOS, or another in tests of the macOS build's logic.
	goos string
}

// Run executes the command line args and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	g := &globals{stdout: stdout, stderr: stderr}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if werr := sandbox.WriteEngineTimes(); werr != nil {
		fmt.Fprintln(stderr, "verifymcp: "+werr.Error())
	}
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil && !errors.Is(err, context.Canceled) {
		err = fmt.Errorf("%w: %v", context.Canceled, err)
	}
	code := exitCode(err)
	if code == ExitInterrupted {
		fmt.Fprintln(stderr, "verifymcp: interrupted; what was committed is kept, and any sandbox containers, networks and volumes of this run were removed")
	} else {
		// An error may quote a package's text (a tool name that tripped
		// the gate): escaped as the report escapes it.
		fmt.Fprintln(stderr, "verifymcp: "+report.Clean(report.FirstLine(err.Error())))
	}
	return code
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "verifymcp",
		Short: "Scan an MCP server package in a hardened sandbox and report what it declares and does",
		Long: `verifymcp takes one exact published MCP server package (npm or PyPI, by its
package name or its MCP registry name), installs and starts it in hardened Docker
containers, captures its MCP contract over stdio, watches what it does, and
reports reason codes, dimension scores and a composite score under a versioned
rubric. It also reads MCP client config files (config scan).

It reports what it found in the checks that ran and says which ran. It never
says a package is safe: no findings means nothing was found by those checks.

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
					return usagef("unknown command %q for verifymcp: did you mean %s? (see verifymcp --help)", args[0], strings.Join(sug, " or "))
				}
				return usagef("unknown command %q for verifymcp (see verifymcp --help)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			level := slog.LevelInfo
			switch {
			case g.verbose:
				level = slog.LevelDebug
			case g.quiet:
				level = slog.LevelWarn
			}
			g.log = slog.New(newProgressHandler(g.stderr, level))
			return nil
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().StringVar(&g.dataDir, "data-dir", "", "directory of the run store and saved bundles (env VERIFYMCP_DATA_DIR; default $XDG_DATA_HOME/verifymcp or ~/.local/share/verifymcp)")
	root.PersistentFlags().StringVar(&g.config, "config", "", "configuration file (env VERIFYMCP_CONFIG; default ~/.config/verifymcp/config.yaml): endpoints, and credentials when mode 600")
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "show debug progress on stderr")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "show only warnings and errors on stderr")
	root.AddCommand(newScanCmd(g), newScoreCmd(g), newRunsCmd(g), newCasesCmd(g), newBatchCmd(g), newWorkerCmd(g), newQueueCmd(g), newRescoreCmd(g), newRubricCmd(g), newPinCmd(g), newDiffCmd(g), newClientConfigCmd(g), newSandboxCmd(g), newCacheCmd(g), newVersionCmd(g))
	root.SetHelpCommand(&cobra.Command{Hidden: true})
	addExamples(root)
	return root
}

// examples are the --help examples of the commands that set none
// themselves, by command path.
var examples = map[string]string{
	"verifymcp": `  verifymcp scan npm:@modelcontextprotocol/server-memory@2026.8.31
  verifymcp scan pypi:mcp-server-fetch==2025.4.7
  verifymcp scan io.github.upstash/context7 --fail-on high --format sarif -o verifymcp.sarif
  verifymcp config scan --scan-servers`,
	"verifymcp scan": `  verifymcp scan npm:@modelcontextprotocol/server-filesystem@2026.8.31 --arg /tmp
  verifymcp scan npm:mcp-notes@latest --fail-on high     # exit 1 on a high or critical finding
  verifymcp scan io.github.upstash/context7 --format json -o report.json
  verifymcp scan ./in-house-server-1.2.0.tgz --env API_TOKEN=placeholder --no-behavior
  verifymcp scan npm:@modelcontextprotocol/server-everything@2026.8.31 --call-timeout 5s --exercise-budget 1m`,
	"verifymcp score": `  verifymcp score 20261202t033823z-f84de20a
  verifymcp score bundle.json --rubric 7 --format json
  verifymcp score bundle.json --fail-on high --ignore-file .verifymcp-ignore.yaml`,
	"verifymcp batch": `  printf 'npm:@modelcontextprotocol/server-memory@2026.8.31\npypi:mcp-server-fetch==2025.4.7\n' > servers.txt
  verifymcp batch servers.txt -j 2
  verifymcp batch servers.txt --rescan --format json -o nightly.json   # a drift monitor
  verifymcp batch servers.txt --enqueue`,
	"verifymcp worker": `  VERIFYMCP_DATABASE_URL=postgres://... verifymcp worker -j 2
  verifymcp worker --until-done`,
	"verifymcp queue":        `  verifymcp queue status`,
	"verifymcp queue status": `  verifymcp queue status --format json`,
	"verifymcp rescore": `  verifymcp rescore --rubric 8
  verifymcp rescore --name @modelcontextprotocol/server-memory --recollect`,
	"verifymcp rubric": `  verifymcp rubric show
  verifymcp rubric explain pkg.drift.parameter_added`,
	"verifymcp rubric show":    `  verifymcp rubric show --rubric 7 --format json`,
	"verifymcp rubric explain": `  verifymcp rubric explain pkg.contract.injection.concealment`,
	"verifymcp sandbox": `  verifymcp sandbox doctor
  verifymcp sandbox build --force`,
	"verifymcp sandbox build": `  verifymcp sandbox build
  verifymcp sandbox build --force`,
	"verifymcp sandbox doctor": `  verifymcp sandbox doctor --ca-bundle /etc/ssl/certs/ca-certificates.crt`,
	"verifymcp sandbox prune": `  verifymcp sandbox prune
  verifymcp sandbox prune --all --cache`,
	"verifymcp cache": `  verifymcp cache stats
  verifymcp cache prune --all`,
	"verifymcp cache stats": `  verifymcp cache stats --format json`,
	"verifymcp cache prune": `  verifymcp cache prune
  verifymcp cache prune --all`,
	"verifymcp version": `  verifymcp version`,
	"verifymcp cases": `  verifymcp cases run --kind synthetic
  verifymcp cases run --from-store --case server-memory`,
	"verifymcp cases run": `  verifymcp cases run --kind reviewed
  verifymcp cases run --from-store --format json`,
	"verifymcp pin show": `  verifymcp pin show npm:@modelcontextprotocol/server-filesystem --arg /tmp
  verifymcp pin show pypi:mcp-server-fetch`,
	"verifymcp pin history": `  verifymcp pin history npm:@modelcontextprotocol/server-memory --format json`,
	"verifymcp pin accept":  `  verifymcp pin accept npm:@modelcontextprotocol/server-memory --reason "2026.8.31 reviewed"`,
	"verifymcp config": `  verifymcp config scan
  verifymcp config scan ~/.cursor/mcp.json --scan-servers`,
}

func addExamples(c *cobra.Command) {
	c.SuggestionsMinimumDistance = 2
	if c.Example == "" {
		c.Example = examples[c.CommandPath()]
	}
	for _, sub := range c.Commands() {
		addExamples(sub)
	}
}

// resolveDataDir returns the data directory from the flag, the environment
// or the default.
func (g *globals) resolveDataDir() (string, error) {
	if g.dataDir != "" {
		return filepath.Abs(g.dataDir)
	}
	return store.DefaultDir()
}

// databaseURL returns the Postgres DSN of a fleet's shared database
// ($VERIFYMCP_DATABASE_URL, else the config file's database_url), or ""
// on one machine. It never comes from a flag: it may hold a password.
func (g *globals) databaseURL() (string, error) {
	if dsn := os.Getenv("VERIFYMCP_DATABASE_URL"); dsn != "" {
		return dsn, nil
	}
	cfg, _, err := loadConfig(g.config)
	if err != nil {
		return "", err
	}
	return cfg.DatabaseURL, nil
}

// openStore opens the run store: in the fleet's Postgres database when
// one is configured (see databaseURL), else in the data directory's SQLite
// file. It also returns the data directory, which holds this machine's
// bundle files and caches either way.
func (g *globals) openStore(ctx context.Context) (*store.Store, string, error) {
	dir, err := g.resolveDataDir()
	if err != nil {
		return nil, "", fmt.Errorf("data directory: %w", err)
	}
	dsn, err := g.databaseURL()
	if err != nil {
		return nil, "", err
	}
	if dsn != "" {
		st, err := store.OpenPostgres(ctx, dsn)
		if err != nil {
			// The error names the server, never the DSN's password.
			return nil, "", fmt.Errorf("open the store in the fleet database (VERIFYMCP_DATABASE_URL or database_url): %w", err)
		}
		return st, dir, nil
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		return nil, "", fmt.Errorf("open store in %s: %w", dir, err)
	}
	return st, dir, nil
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
				return usagef("unknown command %q for %s: did you mean %s? (see %s --help)", args[0], cmd.CommandPath(), strings.Join(sug, " or "), cmd.CommandPath())
			}
			return usagef("unknown command %q for %s (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())
		}
		return usagef("%s takes no arguments (got %q)", cmd.CommandPath(), args)
	}
	return nil
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s needs %s (see --help)", cmd.CommandPath(), what)
		}
		return nil
	}
}
