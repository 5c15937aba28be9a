package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/daemon"
	"github.com/ytrend/ytrend/migrations"
	"github.com/ytrend/ytrend/store"
)

func (c *cli) migrateCmd() *cobra.Command {
	var status bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending schema migrations to the archive (or list them with --status)",
		Long: `Migrate applies the schema migrations built into this binary, each in one
transaction. Every other command does this automatically on open; migrate is
for doing it ahead of a deploy, and --status shows applied and pending ones.
It also runs the one-time repairs a migration registers and that need more
than SQL (0011: rows older imports stored with a date from the future or
before 2005, fields past YouTube's limits, thumbnails not on ytimg.com).
A database migrated by a newer ytrend is refused and left untouched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig(cmd)
			if err != nil {
				return err
			}
			path := cfg.Store.Path
			if status {
				if err := requireArchive(path); err != nil {
					return err
				}
				db, err := store.Open(cmd.Context(), path, store.WithoutMigrate())
				if err != nil {
					return err
				}
				defer db.Close()
				st, err := migrations.Read(cmd.Context(), db.Reader(), migrations.FS)
				if err != nil && !errors.Is(err, store.ErrSchemaTooNew) {
					return err
				}
				tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "VERSION\tNAME\tSTATE")
				for _, m := range st.Applied {
					fmt.Fprintf(tw, "%d\t%s\tapplied %s\n", m.Version, m.Name, m.AppliedAt.UTC().Format(time.RFC3339))
				}
				for _, m := range st.Pending {
					fmt.Fprintf(tw, "%d\t%s\tpending\n", m.Version, m.Name)
				}
				tw.Flush()
				return err // a database newer than this binary: listed, then refused
			}
			if err := makeArchiveDir(path); err != nil {
				return err
			}
			db, err := store.Open(cmd.Context(), path, store.WithoutMigrate())
			if err != nil {
				return err
			}
			defer db.Close()
			applied, err := migrations.Apply(cmd.Context(), db.Writer(), migrations.FS)
			if err != nil {
				return err
			}
			if len(applied) == 0 {
				fmt.Fprintf(c.stdout, "%s: schema up to date\n", path)
			} else {
				fmt.Fprintf(c.stdout, "%s: applied migrations %v\n", path, applied)
			}
			// The one-time repair of what older imports stored (0011).
			if pending, err := db.RepairPending(cmd.Context()); err != nil {
				return err
			} else if pending {
				r, err := db.Repair(cmd.Context(), time.Now())
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "%s: repaired what older imports stored: %d runs dated where no chart can be removed (%d snapshots; %d videos seen only there deleted, %d given their newest real sighting back), %d videos cut to YouTube's limits, %d thumbnails not on ytimg.com emptied\n",
					path, r.Runs, r.Snapshots, r.VideosDeleted, r.VideosRedated, r.VideosCut, r.Thumbnails)
			}
			// Upgrades of stored index data that need Go, resumable: a
			// stopped migrate (or the daily maintenance) carries on.
			st, err := db.RegramProgress(cmd.Context())
			if err != nil || st.Done {
				return err
			}
			upgrades := strings.Join(st.Upgrades, "; ")
			fmt.Fprintf(c.stderr, "%s: indexing %s: %d videos\n", path, upgrades, st.Pending)
			stop := daemon.OnSignals(cmd.Context(), tellUser(c.stderr, "finishing the step in flight"))
			defer stop.Close()
			last := time.Now()
			err = db.Regram(stop.Soft, func(st store.RegramStatus) {
				if isTerminal(c.stderr) && time.Since(last) > time.Second {
					fmt.Fprintf(c.stderr, "\r%d videos to go ", st.Pending)
					last = time.Now()
				}
			})
			if err != nil && stop.Soft.Err() != nil {
				return fmt.Errorf("stopped; run migrate again to carry on: %w", err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "%s: indexed %s\n", path, upgrades)
			return nil
		},
	}
	cmd.Flags().BoolVar(&status, "status", false, "list applied and pending migrations without applying")
	return cmd
}
