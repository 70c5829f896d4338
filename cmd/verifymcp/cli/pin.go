package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/ecosystem"
	"github.com/verifymcp/verifymcp/ecosystem/oci"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

// identityFlags name a server identity beside a target: the server
// arguments and the names of the placeholder environment.
type identityFlags struct {
	args   []string
	env    []string
	format string
}

const identityHelp = `IDENTITY is a run id from the store (the identity that run was started
with), or a target (npm:NAME, npm:NAME@VERSION, pkg:npm/NAME@VERSION,
pypi:NAME, pypi:NAME==VERSION, an image oci:IMAGE[:TAG|@DIGEST], a bundle
mcpb:PATH|URL[#sha256=HEX] that has a stored run; the
version does not matter) with the --arg and --env it is started with: a
server identity is the package, its arguments and the names of its
placeholder environment, so the same package started two ways has two pins.
An image's identity is its repository; a bundle's, its manifest's name. An
image pinned from a run by tag shows its version as TAG@DIGEST, the digest
the tag resolved to.`

func newPinCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pin",
		Short: "Show, accept and list the pinned baseline contract of a server identity",
		Long: `A pin is the baseline contract of one server identity. The first scan of an
identity pins it (trust on first use); every later scan, of any version, is
compared with the pin, and the report's DRIFT section and the contract_drift
dimension say what moved. Nothing re-pins silently: a new baseline is
accepted explicitly, with who and when recorded, and the history keeps every
baseline. A pin is not a statement that the server was honest when it was
pinned.

` + identityHelp,
		Example: `  verifymcp pin show npm:@modelcontextprotocol/server-filesystem --arg /tmp
  verifymcp pin accept npm:@modelcontextprotocol/server-filesystem --arg /tmp --reason "reviewed 2026.8.21"
  verifymcp pin accept 01JTDX6W8Q3M9V2K5R7T1N0B4C --by alice --reason "new tools reviewed"
  verifymcp pin history npm:mcp-notes --format json`,
	}
	cmd.AddCommand(newPinShowCmd(g), newPinAcceptCmd(g), newPinHistoryCmd(g))
	return cmd
}

func bindIdentityFlags(cmd *cobra.Command, f *identityFlags) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.args, "arg", nil, "server argument of the identity (repeatable, in order), as given to scan")
	fl.StringArrayVar(&f.env, "env", nil, "NAME (or NAME=VALUE, the value ignored) of the identity's placeholder environment (repeatable)")
	fl.StringVar(&f.format, "format", "table", "output format: table or json")
}

func newPinShowCmd(g *globals) *cobra.Command {
	f := &identityFlags{}
	cmd := &cobra.Command{
		Use:   "show IDENTITY",
		Short: "Show the pinned contract of a server identity",
		Long:  "Show the baseline in force for a server identity and a summary of its contract.\n\n" + identityHelp + "\n\n" + exitCodesHelp,
		Args:  exactArgs(1, "a run id or a target"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withPins(cmd.Context(), args[0], f, func(ctx context.Context, st *store.Store, v *pinView) error {
				pin, err := st.CurrentPin(ctx, v.Identity.Key)
				switch {
				case errors.Is(err, store.ErrNotFound):
					return nil
				case err != nil:
					return err
				}
				if v.Current, err = pinEntry(ctx, st, *pin); err != nil {
					return err
				}
				b, err := storedBundle(ctx, st, pin.RunID)
				if err != nil {
					return err
				}
				v.Surface = report.SurfaceOf(b.Contract)
				return nil
			})
		},
	}
	bindIdentityFlags(cmd, f)
	return cmd
}

func newPinHistoryCmd(g *globals) *cobra.Command {
	f := &identityFlags{}
	cmd := &cobra.Command{
		Use:   "history IDENTITY",
		Short: "List every baseline a server identity has had, oldest first",
		Long:  "List the baselines of a server identity: the first scan's and each one accepted since, with who accepted it, when and why.\n\n" + identityHelp + "\n\n" + exitCodesHelp,
		Args:  exactArgs(1, "a run id or a target"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withPins(cmd.Context(), args[0], f, func(ctx context.Context, st *store.Store, v *pinView) error {
				pins, err := st.PinHistory(ctx, v.Identity.Key)
				if err != nil {
					return err
				}
				v.History = []report.PinEntry{}
				for _, p := range pins {
					e, err := pinEntry(ctx, st, p)
					if err != nil {
						return err
					}
					v.History = append(v.History, *e)
				}
				if n := len(v.History); n > 0 {
					v.Current = &v.History[n-1]
				}
				return nil
			})
		},
	}
	bindIdentityFlags(cmd, f)
	return cmd
}

func newPinAcceptCmd(g *globals) *cobra.Command {
	f := &identityFlags{}
	var runID, by, reason string
	cmd := &cobra.Command{
		Use:   "accept IDENTITY",
		Short: "Accept a stored run's contract as the new baseline of its server identity",
		Long: `Make a stored run's contract the baseline that later scans of its server
identity are compared with. IDENTITY given as a run id accepts that run; given
as a target, the newest stored run of that identity that captured a contract
(or --run). Who accepted it (--by, default the operating-system user) and why
(--reason) are recorded with the time; the previous baselines stay in the
history. The output lists the changes from the previous baseline, so that
what is being accepted is on the screen.

` + identityHelp + "\n\n" + exitCodesHelp,
		Args: exactArgs(1, "a run id or a target"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if by == "" {
				by = osUser()
			}
			if strings.TrimSpace(by) == "" {
				return usagef("--by: say who accepts the baseline (the operating-system user is unknown)")
			}
			return g.withPins(cmd.Context(), args[0], f, func(ctx context.Context, st *store.Store, v *pinView) error {
				id := store.Identity{Ecosystem: v.Identity.Ecosystem, Name: v.Identity.Name, Args: v.Identity.Args, EnvNames: v.Identity.EnvNames}
				accept := runID
				if accept == "" && v.fromRun != "" {
					accept = v.fromRun
				}
				if accept == "" {
					latest, err := st.LatestRun(ctx, v.Identity.Key)
					if errors.Is(err, store.ErrNotFound) {
						return usagef("%s is no run id in the store, and no stored run of %s:%s (with these --arg and --env) captured a contract: scan it first", args[0], v.Identity.Ecosystem, v.Identity.Name)
					}
					if err != nil {
						return err
					}
					accept = latest.RunID
				}
				next, err := storedBundle(ctx, st, accept)
				if err != nil {
					return err
				}
				var before *evidence.Bundle
				if prev, err := st.CurrentPin(ctx, v.Identity.Key); err == nil {
					if before, err = storedBundle(ctx, st, prev.RunID); err != nil {
						return err
					}
				} else if !errors.Is(err, store.ErrNotFound) {
					return err
				}
				pin, err := st.AcceptPin(ctx, id, accept, by, reason, time.Now().UTC())
				if errors.Is(err, store.ErrNotIdentityRun) || errors.Is(err, store.ErrNotFound) {
					return usagef("%v", err)
				}
				if err != nil {
					return err
				}
				if v.Current, err = pinEntry(ctx, st, *pin); err != nil {
					return err
				}
				v.Surface = report.SurfaceOf(next.Contract)
				v.Accepted = report.NewDiffView(report.DiffSide{}, report.DiffSide{}, classifyRuns(before, next)).Changes
				return nil
			})
		},
	}
	bindIdentityFlags(cmd, f)
	cmd.Flags().StringVar(&runID, "run", "", "the stored run to accept (default: the run IDENTITY names, or the identity's newest run with a contract)")
	cmd.Flags().StringVar(&by, "by", "", "who accepts the baseline (default: the operating-system user)")
	cmd.Flags().StringVar(&reason, "reason", "", "why the new baseline is accepted, recorded with it")
	return cmd
}

// pinView is a report.PinView being built, and the run its identity was
// read from, if any.
type pinView struct {
	*report.PinView
	fromRun string
}

// withPins opens the store, reads the identity arg names, lets fn fill
// the view, and writes it.
func (g *globals) withPins(ctx context.Context, arg string, f *identityFlags, fn func(context.Context, *store.Store, *pinView) error) error {
	format, err := checkFormat(report.OutputOther, f.format)
	if err != nil {
		return err
	}
	st, _, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	id, fromRun, err := identityOf(ctx, st, arg, f)
	if err != nil {
		return err
	}
	v := &pinView{PinView: &report.PinView{Identity: report.Identity{Key: store.IdentityKey(id), Ecosystem: id.Ecosystem, Name: id.Name,
		Args: nonNilStrings(id.Args), EnvNames: nonNilStrings(id.EnvNames)}}, fromRun: fromRun}
	if err := fn(ctx, st, v); err != nil {
		return err
	}
	return report.WritePin(g.stdout, format, *v.PinView)
}

// identityOf reads a server identity from a run id in the store, or from a
// target and the identity flags.
func identityOf(ctx context.Context, st *store.Store, arg string, f *identityFlags) (store.Identity, string, error) {
	if data, err := st.Bundle(ctx, arg); err == nil {
		if len(f.args) > 0 || len(f.env) > 0 {
			return store.Identity{}, "", usagef("%s is a run id, whose identity is the one it was started with: --arg and --env name the identity of a target", arg)
		}
		b, err := evidence.Decode(data)
		if err != nil {
			return store.Identity{}, "", fmt.Errorf("stored run %s: %w", arg, err)
		}
		return store.IdentityOf(b.Target), arg, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return store.Identity{}, "", err
	}
	t, err := pipeline.ParseTarget(arg)
	if err != nil {
		return store.Identity{}, "", fmt.Errorf("%w (nor is it a run id in the store)", err)
	}
	if t.File != "" {
		return store.Identity{}, "", usagef("%s: name the package (npm:NAME, pypi:NAME) or a run id; a local file names no identity of its own", arg)
	}
	name, err := identityName(ctx, st, arg, t)
	if err != nil {
		return store.Identity{}, "", err
	}
	names := make([]string, 0, len(f.env))
	for _, e := range f.env {
		name, _, _ := strings.Cut(e, "=")
		if name == "" {
			return store.Identity{}, "", usagef("--env %q: want NAME or NAME=VALUE", e)
		}
		names = append(names, name)
	}
	return store.Identity{Ecosystem: t.Ecosystem, Name: name, Args: nonNilStrings(f.args), EnvNames: names}, "", nil
}

// identityName is the name of the identity target t (arg as written)
// names: a package's name; for a release that runs as shipped, the name
// its runs are stored under (runsFilter): an image's repository, a
// layout's directory name, and a bundle's manifest name, which is read
// from the newest stored run of that file, URL or digest.
func identityName(ctx context.Context, st *store.Store, arg string, t pipeline.Target) (string, error) {
	if !pipeline.Shipped(t.Ecosystem) {
		return t.Name, nil
	}
	f, err := runsFilter(arg)
	if err != nil {
		return "", usagef("%s: %v", arg, err)
	}
	if f.Name != "" {
		return f.Name, nil
	}
	f.Limit = 1
	runs, err := st.Runs(ctx, f)
	if err != nil {
		return "", err
	}
	if len(runs) == 0 {
		return "", usagef("%s: no stored run of this bundle, whose identity is its manifest's name: scan it first, or give a run id", arg)
	}
	return runs[0].Name, nil
}

// storedBundle reads and decodes a stored run that captured a contract.
func storedBundle(ctx context.Context, st *store.Store, runID string) (*evidence.Bundle, error) {
	data, err := st.Bundle(ctx, runID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, usagef("run %s is not in the store", runID)
	}
	if err != nil {
		return nil, err
	}
	b, err := evidence.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("stored run %s: %w", runID, err)
	}
	if b.Contract == nil {
		return nil, usagef("run %s captured no contract (the scan ended with %s)", runID, b.Sandbox.Outcome)
	}
	return b, nil
}

// classifyRuns classifies the changes from run a's contract to run b's,
// the package's repository included; a nil a is an empty contract.
func classifyRuns(a, b *evidence.Bundle) []contract.Change {
	var ac *contract.Contract
	repoA := ""
	if a != nil {
		ac, repoA = a.Contract, repositoryURL(a)
	}
	cs := contract.Classify(ac, b.Contract)
	if a != nil {
		cs = append(cs, contract.ClassifyRepository(repoA, repositoryURL(b))...)
	}
	return cs
}

func repositoryURL(b *evidence.Bundle) string {
	if b.Supply == nil || b.Supply.Registry == nil {
		return ""
	}
	return b.Supply.Registry.RepositoryURL
}

func pinEntry(ctx context.Context, st *store.Store, p store.Pin) (*report.PinEntry, error) {
	version, err := pinVersion(ctx, st, p)
	if err != nil {
		return nil, err
	}
	return &report.PinEntry{Seq: p.Seq, RunID: p.RunID, RunDate: p.RunDate.UTC().Format(time.RFC3339), Version: version,
		PinnedBy: p.PinnedBy, PinnedAt: p.PinnedAt.UTC().Format(time.RFC3339), Reason: p.Reason}, nil
}

// pinVersion is the version of a pin's run: the version it was stored
// under, and for a release that ran as shipped under a version that is
// not exact (an image scanned by tag) the digest that version resolved to
// after '@' (TAG@sha256:...), since a tag can be moved. Only such a run's
// bundle is read.
func pinVersion(ctx context.Context, st *store.Store, p store.Pin) (string, error) {
	if e, ok := ecosystem.Of(p.Identity.Ecosystem); !ok || p.Version == "" {
		return p.Version, nil
	} else if _, exact := e.Exact(p.Version); exact {
		return p.Version, nil
	}
	b, err := storedBundle(ctx, st, p.RunID)
	if err != nil {
		return "", err
	}
	if b.Shipped == nil || b.Shipped.Digest == "" {
		return p.Version, nil
	}
	return p.Version + "@" + b.Shipped.Digest, nil
}

func osUser() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		return ""
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		return name + "@" + host
	}
	return name
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type diffFlags struct {
	scan   scanFlags
	rescan bool
}

func newDiffCmd(g *globals) *cobra.Command {
	f := &diffFlags{}
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Classify the contract change between two stored runs or two targets",
		Long: `Classify, per tool, prompt, resource and template, what changed from A's
contract to B's: the same fourteen kinds as the drift check (twelve surfaced,
ten with the safety bit). A and B are each a run id from the store or a target;
a target is read from the newest stored run of that exact version and
identity (--arg, --env) that captured a contract, and scanned when there is
none (or with --rescan). To compare the same version scanned twice, give the
two run ids, or --rescan.

` + exitCodesHelp,
		Example: `  verifymcp diff npm:@modelcontextprotocol/server-filesystem@2025.7.1 npm:@modelcontextprotocol/server-filesystem@2025.8.21 --arg /tmp
  verifymcp diff 01JTDX6W8Q3M9V2K5R7T1N0B4C 01JTE0A1B2C3D4E5F6G7H8J9K0 --format json
  verifymcp diff npm:mcp-notes@1.2.3 npm:mcp-notes@1.2.3 --rescan`,
		Args: exactArgs(2, "two runs or targets, A and B"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runDiff(cmd.Context(), args[0], args[1], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scan.bin, "bin", "", "entry point (npm bin or PyPI console script) to start when a side is scanned")
	fl.StringArrayVar(&f.scan.args, "arg", nil, "server argument of both sides' identity (repeatable, in order)")
	fl.StringArrayVar(&f.scan.env, "env", nil, "NAME=VALUE placeholder environment of both sides (repeatable); values are never stored")
	fl.StringVar(&f.scan.format, "format", "table", "output format: table or json")
	fl.BoolVar(&f.rescan, "rescan", false, "scan target sides even when a stored run of them exists")
	bindSandboxFlags(fl, &f.scan)
	return cmd
}

func (g *globals) runDiff(ctx context.Context, rawA, rawB string, f *diffFlags) error {
	format, err := checkFormat(report.OutputOther, f.scan.format)
	if err != nil {
		return err
	}
	env, err := pipeline.ParseEnv(f.scan.env)
	if err != nil {
		return usageError{err}
	}
	if _, err := checkSandboxFlags(&f.scan); err != nil {
		return err
	}
	st, dataDir, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	rb := rubric.Current()
	var od *pipeline.OnDemand
	closeOD := func() {}
	defer func() { closeOD() }()
	side := func(raw string) (*evidence.Bundle, bool, error) {
		if _, err := st.Bundle(ctx, raw); err == nil {
			b, err := storedBundle(ctx, st, raw)
			return b, false, err
		}
		t, err := pipeline.ParseTarget(raw)
		if err != nil {
			return nil, false, fmt.Errorf("%w (nor is it a run id in the store)", err)
		}
		if !f.rescan && t.File == "" {
			if b, err := g.storedSide(ctx, st, t, f, env); err != nil || b != nil {
				return b, false, err
			}
		}
		if od == nil {
			if od, closeOD, err = g.onDemand(ctx, &f.scan, st, dataDir, rb, st); err != nil {
				return nil, false, err
			}
		}
		g.log.Info("scanning", "target", raw)
		ran, err := od.Run(ctx, raw, pipeline.Options{Bin: f.scan.bin, Args: f.scan.args, Env: env})
		if err != nil {
			return nil, false, err
		}
		if ran.Bundle.Contract == nil {
			return nil, true, fmt.Errorf("the scan of %s captured no contract (it ended with %s; run %s)", raw, ran.Bundle.Sandbox.Outcome, ran.Bundle.Run.ID)
		}
		return ran.Bundle, true, nil
	}
	a, scannedA, err := side(rawA)
	if err != nil {
		return err
	}
	b, scannedB, err := side(rawB)
	if err != nil {
		return err
	}
	return report.WriteDiff(g.stdout, format, report.NewDiffView(diffSide(a, scannedA), diffSide(b, scannedB), classifyRuns(a, b)))
}

// storedSide returns the newest stored run of target t's exact version
// (resolved on the registry) and identity that captured a contract, or
// nil when there is none.
func (g *globals) storedSide(ctx context.Context, st *store.Store, t pipeline.Target, f *diffFlags, env map[string]string) (*evidence.Bundle, error) {
	sc, err := g.newResolving(&f.scan, rubric.Current())
	if err != nil {
		return nil, err
	}
	rt, err := sc.p.Resolve(ctx, t)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	eco := rt.Target.Ecosystem
	key := store.IdentityKey(store.Identity{Ecosystem: eco, Name: rt.Name, Args: nonNilStrings(f.scan.args), EnvNames: names})
	sf := store.Filter{Ecosystem: eco, Name: rt.Name, Version: rt.Version}
	if eco == (oci.Ecosystem{}).Name() && rt.Integrity != "" {
		// An image asked for by digest: a run of a tag that resolved to
		// it is stored under the tag, with the digest in its bundle.
		sf.Version, sf.Digest = "", rt.Integrity
	}
	runs, err := st.Runs(ctx, sf)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, r := range runs {
		if seen[r.RunID] || r.Outcome != evidence.OutcomeOK {
			continue
		}
		seen[r.RunID] = true
		b, err := storedBundle(ctx, st, r.RunID)
		if err != nil {
			return nil, err
		}
		if store.IdentityKey(store.IdentityOf(b.Target)) == key && rt.Artefact(b.Target.Integrity) {
			return b, nil
		}
	}
	return nil, nil
}

func diffSide(b *evidence.Bundle, scanned bool) report.DiffSide {
	return report.DiffSide{RunID: b.Run.ID, Target: report.ReleaseName(b),
		RunDate: b.Run.Date.UTC().Format(time.RFC3339), SchemaHash: b.Contract.SchemaHash, Scanned: scanned}
}
