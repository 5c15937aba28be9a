package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/daemon"
)

func (c *cli) optimizeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "optimize",
		Short: "Merge the archive's full-text index and refresh the query planner's statistics",
		Long: `Optimize does the archive's upkeep now: it merges the full-text index into
one segment (searches then look in one place and skip no superseded entries)
and refreshes SQLite's planner statistics. "ytrend run" does the same on
scheduler.maintenance (daily by default). It works in short transactions, so
fetches and searches in other processes go on meanwhile; an interrupted
optimize loses nothing and the next one carries on.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig(cmd)
			if err != nil {
				return err
			}
			if _, err := os.Stat(cfg.Store.Path); errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("archive %s does not exist; point --db, YTREND_DB or store.path at it", cfg.Store.Path)
			} else if err != nil {
				return fmt.Errorf("archive: %w", err)
			}
			a, err := c.open(cmd, openOpts{})
			if err != nil {
				return err
			}
			defer a.close()
			return daemon.Maintain(cmd.Context(), a.db, a.cfg.Store.Path, a.log)
		},
	}
}
