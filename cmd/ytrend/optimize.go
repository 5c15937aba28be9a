package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/daemon"
)

func (c *cli) optimizeCmd() *cobra.Command {
	var compact bool
	cmd := &cobra.Command{
		Use:   "optimize",
		Short: "Merge the archive's full-text index and refresh the query planner's statistics",
		Long: `Optimize does the archive's upkeep now: it merges the full-text index into
one segment (searches then look in one place and skip no superseded entries)
and refreshes SQLite's planner statistics. "ytrend run" does the same on
scheduler.maintenance (daily by default). It works in short transactions, so
fetches and searches in other processes go on meanwhile; an interrupted
optimize loses nothing and the next one carries on.

With --compact it then rewrites the archive file (SQLite's VACUUM), so that
each table's pages lie together again, as "ytrend import" does after a large
import: searches take 10-25% less CPU on an archive built by imports. It
holds the write lock throughout (about 30 s at a million videos; fetches in
other processes wait), needs free disk about twice the archive's size, and
an interrupted compaction is rolled back whole.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Upkeep of an archive that is not there would create an
			// empty one to keep.
			a, err := c.open(cmd, openOpts{existing: true})
			if err != nil {
				return err
			}
			defer a.close()
			// Ctrl-C ends the merge between two of its steps, and rolls a
			// compaction back whole; either way the archive is as it was
			// or better.
			stop := daemon.OnSignals(cmd.Context(), tellUser(c.stderr, "rolling back what is unfinished"))
			defer stop.Close()
			if err := daemon.Maintain(stop.Soft, a.db, a.cfg.Store.Path, a.log); err != nil || !compact {
				return err
			}
			start := time.Now()
			if err := a.db.Compact(stop.Soft); err != nil {
				if stop.Soft.Err() != nil {
					// SQLite keeps a VACUUM whole or not at all, and an
					// interrupt that lands as it commits cannot tell which.
					return fmt.Errorf("compaction interrupted: the archive is intact, compacted whole or not at all: %w", err)
				}
				return fmt.Errorf("compact (the index is merged; the archive is as it was): %w", err)
			}
			a.log.Info("archive compacted", "archive", a.cfg.Store.Path, "duration", time.Since(start).Round(time.Millisecond).String())
			return nil
		},
	}
	cmd.Flags().BoolVar(&compact, "compact", false, "then compact the archive file (VACUUM; needs free disk about twice its size)")
	return cmd
}
