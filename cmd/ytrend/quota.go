package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/budget"
	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/view"
)

func (c *cli) quotaCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Inspect and spend the shared quota budget",
	}
	cmd.AddCommand(c.quotaStatusCmd(), c.quotaReserveCmd(), c.quotaReleaseCmd())
	return cmd
}

func (c *cli) quotaStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each limit's used and remaining units and when the next unit frees up",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := c.open(cmd, openOpts{limiter: true, status: true})
			if err != nil {
				return err
			}
			defer a.close()
			st, err := a.limiter.Status(cmd.Context())
			if err != nil {
				return err
			}
			warnings := a.budget.Durability(cmd.Context())
			if asJSON {
				out := view.Status(st)
				out.Warnings = append(out.Warnings, warnings...)
				return writeJSON(c.stdout, out)
			}
			printStatus(c.stdout, st, a.budget.Name())
			for _, w := range warnings {
				fmt.Fprintln(c.stdout, "warning: the budget can be lost: "+w)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printStatus(w io.Writer, st quota.Status, backend string) {
	fmt.Fprintf(w, "credential %q, %s, at %s\n\n", st.Credential, backend, st.At.UTC().Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LIMIT\tWINDOW\tUSED\tREMAINING\tUNITS\tNEXT UNIT FREES\tUSE")
	for _, l := range st.Limits {
		next := "-"
		if l.NextFree > 0 {
			next = "in " + config.FormatDuration(l.NextFree.Round(time.Second))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", l.Name, config.FormatDuration(l.Window), l.Used, l.Remaining, l.Units, next, bar(l.Used, l.Units, 20))
	}
	tw.Flush()
	if st.Exhausted != nil {
		fmt.Fprintf(w, "\nupstream: YouTube reported the quota spent (%s); every reservation is refused until %s (in %s)\n",
			termLine(st.Exhausted.Reason), st.Exhausted.Until.UTC().Format(time.RFC3339),
			config.FormatDuration(time.Until(st.Exhausted.Until).Round(time.Second)))
	}
	for _, e := range st.ExhaustedCalls {
		fmt.Fprintf(w, "upstream: YouTube reported %s's quota spent (%s); %s is refused until %s (in %s)\n",
			e.Call, termLine(e.Reason), e.Call, e.Until.UTC().Format(time.RFC3339),
			config.FormatDuration(time.Until(e.Until).Round(time.Second)))
	}
	if st.Ledger.Epoch != "" {
		fmt.Fprintf(w, "\nledger: epoch %s, %s old\n", termLine(st.Ledger.Epoch), config.FormatDuration(st.Ledger.Age.Round(time.Second)))
	}
	for _, n := range budget.Notes(st) {
		fmt.Fprintln(w, "ledger: "+termLine(n)) // a note names the epoch, as Redis holds it
	}
	if st.Leader != nil {
		fmt.Fprintf(w, "leader: %s (token %d)\n", termLine(st.Leader.Holder), st.Leader.Token)
	}
}

// remainingText says what is left of the budget after a grant. A fail-open
// grant was made without asking the backend, so nothing is known of it.
func remainingText(remaining int64, failOpen bool) string {
	if failOpen || remaining < 0 {
		return "remaining unknown: granted while the budget was unreachable"
	}
	return fmt.Sprintf("%d remaining", remaining)
}

// bar draws used/units as a fixed-width bar with a percentage.
func bar(used, units int64, width int) string {
	if units <= 0 {
		return ""
	}
	filled := int(used * int64(width) / units)
	filled = min(max(filled, 0), width)
	return fmt.Sprintf("[%s%s] %3d%%", strings.Repeat("#", filled), strings.Repeat(".", width-filled), used*100/units)
}

func (c *cli) quotaReserveCmd() *cobra.Command {
	var (
		call   string
		cost   int64
		id     string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "reserve (--call NAME | --cost N)",
		Short: "Reserve units from the shared budget by hand (for scripts that call the API themselves)",
		Long: `Reserve charges one API call (--call videos.list) or a number of units against
every limit (--cost N) from the same budget ytrend's fetches spend from.

Exit status: 0 granted; 75 (EX_TEMPFAIL) refused, with the refusing limit and
the retry-after on stderr; 1 errors (unknown call, impossible cost, backend).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hasCall, hasCost := cmd.Flags().Changed("call"), cmd.Flags().Changed("cost")
			if hasCall == hasCost {
				return usageError{errors.New("give exactly one of --call NAME or --cost N")}
			}
			a, err := c.open(cmd, openOpts{limiter: true})
			if err != nil {
				return err
			}
			defer a.close()
			var opts []quota.ReserveOption
			if id != "" {
				opts = append(opts, quota.WithID(id))
			}
			if hasCost {
				opts = append(opts, quota.WithCost(cost))
			}
			res, err := a.limiter.Reserve(cmd.Context(), call, opts...)
			var refused *quota.RefusedError
			if err != nil && !errors.As(err, &refused) {
				return err
			}
			if asJSON {
				if jerr := writeJSON(c.stdout, view.ReservationOf(res)); jerr != nil {
					return jerr
				}
			} else if res.Granted {
				fmt.Fprintf(c.stdout, "granted %s: %s, %d units; %s\n", res.ID, res.Call, res.Cost, remainingText(res.Remaining(), res.FailOpen))
			}
			if refused != nil {
				fmt.Fprintf(c.stderr, "ytrend: refused by limit %q; retry after %s (%s)\n", res.RefusedBy,
					config.FormatDuration(res.RetryAfter.Round(time.Millisecond)), res.At.Add(res.RetryAfter).UTC().Format(time.RFC3339))
				return withCode(exitTempFail, nil)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&call, "call", "", "API call to reserve for, e.g. videos.list or search.list")
	cmd.Flags().Int64Var(&cost, "cost", 0, "units to charge against every limit")
	cmd.Flags().StringVar(&id, "id", "", "reservation ID; repeating a reserve with the same ID charges once")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (c *cli) quotaReleaseCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "release ID",
		Short: "Give back a reservation whose call was never sent",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.open(cmd, openOpts{limiter: true})
			if err != nil {
				return err
			}
			defer a.close()
			if err := a.limiter.Release(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "released %s\n", args[0])
			return nil
		},
	}
}
