package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/replication"
)

func (c *cli) archiveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "archive",
		Short: "Inspect the archive's replicas and restore the archive from them",
		Long: `The leader of ytrend run streams the archive to every URL in archive.replicas
(Litestream, embedded), each leadership term below term-<fence token>.
"archive status" shows each replica; "archive restore" rebuilds the archive,
as it is now or as it was at a time, into a new file.`,
	}
	cmd.AddCommand(c.archiveStatusCmd(), c.archiveRestoreCmd())
	return cmd
}

func (c *cli) archiveStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each replica's generation, position, lag, last snapshot and last error",
		Long: `Status reads each replica (its newest term and what it holds) and what the
process streaming to it last wrote down beside the archive (lag, errors).
Exit status 1 when a replica cannot be read or none is configured.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig(cmd)
			if err != nil {
				return err
			}
			if len(cfg.Archive.Replicas) == 0 {
				return withCode(exitError, errors.New("the archive is not backed up: no archive.replicas configured"))
			}
			sts := replication.ReadStatus(cmd.Context(), cfg.Store.Path, cfg.Archive.Replicas)
			if asJSON {
				if err := writeJSON(c.stdout, sts); err != nil {
					return err
				}
			} else {
				printReplicas(c.stdout, sts)
			}
			for _, st := range sts {
				if st.Generation == "" {
					return withCode(exitError, nil)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printReplicas(w io.Writer, sts []replication.Status) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPLICA\tGENERATION\tPOSITION\tLAG\tLAST SYNC\tLAST SNAPSHOT\tERRORS\tLAST ERROR")
	for _, st := range sts {
		lag := "-"
		if st.Streaming {
			lag = fmt.Sprintf("%.1fs", st.LagSeconds)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", st.Replica, orDash(st.Generation), orDash(st.Position), lag,
			formatTime(st.LastSync), formatTime(st.LastSnapshot), st.Errors, orDash(termLine(st.LastError)))
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (c *cli) archiveRestoreCmd() *cobra.Command {
	var at, out, from string
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Restore the archive from a replica into a new file, as it is now or at a time",
		Long: `Restore rebuilds the archive from the first replica that holds it (or the one
--replica names): the newest term's latest state, or with --at the state at
that time (RFC 3339, a date meaning its end in UTC, or a duration ago such as 2h). The output
(--out, default the archive's path) must not exist: a restore never overwrites
an archive. A missing, empty or damaged replica is an error naming the replica
and the generation (term), and leaves nothing behind.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig(cmd)
			if err != nil {
				return err
			}
			urls := cfg.Archive.Replicas
			if from != "" {
				if err := config.ValidateReplicaURL(from); err != nil {
					return usageError{fmt.Errorf("--replica %v", err)}
				}
				urls = []string{from}
			}
			if len(urls) == 0 {
				return usageError{errors.New("no replica: configure archive.replicas or give --replica URL")}
			}
			var opt replication.RestoreOptions
			if at != "" {
				if opt.At, err = parseWhen("--at", at, time.Now(), true); err != nil {
					return usageError{err}
				}
			}
			if out == "" {
				out = cfg.Store.Path
			}
			start := time.Now()
			r, err := replication.Restore(cmd.Context(), urls, out, opt)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "restored %s from %s %s in %s\n", out, r.Replica, r.Generation, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "restore the state at this time (RFC 3339, 2006-01-02, or a duration ago: 2h)")
	cmd.Flags().StringVar(&out, "out", "", "the new file to write (default: the archive's path, which must not exist)")
	cmd.Flags().StringVar(&from, "replica", "", "restore from this replica URL instead of archive.replicas")
	return cmd
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
