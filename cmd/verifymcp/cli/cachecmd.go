package cli

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/cache"
)

func newCacheCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Inspect and prune the cache of third-party answers",
		Long: `Answers that cost a call (OSV, Socket, GitHub) are cached in the data directory's
database, keyed by everything that determines them, for --cache-ttl (24h).
scan --refresh asks again instead of reading the cache.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	stats := &cobra.Command{
		Use:   "stats",
		Short: "Entries, expired entries, bytes, hits and misses per namespace",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.openCache(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.Stats(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAMESPACE\tENTRIES\tEXPIRED\tBYTES\tHITS\tMISSES")
			for _, s := range st {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\n", s.Namespace, s.Entries, s.Expired, s.Bytes, s.Hits, s.Misses)
			}
			return tw.Flush()
		},
	}
	var all bool
	prune := &cobra.Command{
		Use:   "prune",
		Short: "Remove expired entries (--all: every entry)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.openCache(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			n, err := c.Prune(cmd.Context(), all)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "removed %d cache entries\n", n)
			return nil
		},
	}
	prune.Flags().BoolVar(&all, "all", false, "remove every entry, not only expired ones")
	cmd.AddCommand(stats, prune)
	return cmd
}

func (g *globals) openCache(cmd *cobra.Command) (*cache.Cache, error) {
	dir, err := g.resolveDataDir()
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	return g.openAnswers(cmd.Context(), dir)
}

// openAnswers opens the cache of third-party answers and judge verdicts:
// the Postgres database named by $VERIFYMCP_CACHE_DSN or the config file's
// cache_dsn when set, else the fleet's database ($VERIFYMCP_DATABASE_URL or
// database_url) when set (both shared by many machines), else the SQLite
// database in the data directory. The DSN comes from the environment or the config
// file only, never a flag, since it may hold a password.
func (g *globals) openAnswers(ctx context.Context, dataDir string) (*cache.Cache, error) {
	cfg, _, err := loadConfig(g.config)
	if err != nil {
		return nil, err
	}
	var c *cache.Cache
	if dsn := pick(os.Getenv("VERIFYMCP_CACHE_DSN"), cfg.CacheDSN); dsn != "" {
		c, err = cache.OpenDSN(ctx, dsn)
	} else if dsn := pick(os.Getenv("VERIFYMCP_DATABASE_URL"), cfg.DatabaseURL); dsn != "" {
		c, err = cache.OpenPostgres(ctx, dsn)
	} else {
		c, err = cache.Open(ctx, dataDir)
	}
	if err != nil {
		return nil, fmt.Errorf("open cache: %w", err)
	}
	return c, nil
}
