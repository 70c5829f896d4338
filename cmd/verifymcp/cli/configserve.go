package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/web"
)

func newConfigServeCmd(g *globals) *cobra.Command {
	var addr, dir string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the config scan's browser page on this machine: drop a config file on it, nothing is uploaded",
		Long: `Serve the config scan's browser page on a loopback address, for people who
prefer a page to a command. The page reads config files dropped on it with
verifymcp's own code compiled to WebAssembly, in the browser tab: it gives
the findings of 'verifymcp config scan', downloads them as JSON or SARIF, and
makes no network request after it has loaded (its Content-Security-Policy
forbids it). This command only hands the browser the page's files; it never
sees a config file.

The page is the folder web/ of a release archive, next to the verifymcp
binary (make web builds it into bin/web). Opening web/index.html from disk
works as well; serve is for browsers or policies that refuse file:// pages.
Only a loopback address is accepted. Ctrl-C stops it.`,
		Example: `  verifymcp config serve
  verifymcp config serve --addr 127.0.0.1:9000
  verifymcp config serve --dir ./bin/web

  # Or with no verifymcp at all, from the page's folder:
  #   python3 -m http.server --bind 127.0.0.1 8765`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.runConfigServe(cmd.Context(), addr, dir)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8765", "loopback HOST:PORT to listen on (port 0: any free port)")
	cmd.Flags().StringVar(&dir, "dir", "", "the built page's folder (default: web/ next to the verifymcp binary)")
	return cmd
}

func (g *globals) runConfigServe(ctx context.Context, addr, dir string) error {
	if err := web.Loopback(addr); err != nil {
		return usagef("--addr: %v", err)
	}
	if dir == "" {
		exe, err := os.Executable()
		if err != nil {
			return usagef("the binary's folder is unknown (%v): name the page's folder with --dir", err)
		}
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dir = filepath.Join(filepath.Dir(exe), "web")
	}
	h, err := web.Handler(dir)
	if err != nil {
		return usageError{err}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usagef("listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(g.stdout, "serving the config scan page from %s on http://%s/ (Ctrl-C stops)\n", dir, ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		fmt.Fprintln(g.stdout, "stopped")
		return nil
	}
}
