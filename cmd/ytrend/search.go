package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// Highlight markers: ANSI bold on a terminal (what termMarks' marks become
// once the snippet is escaped), HTML-style marks in JSON.
const (
	boldOn   = "\x1b[1m"
	boldOff  = "\x1b[0m"
	markOpen = "<mark>"
	markEnd  = "</mark>"
)

func (c *cli) searchCmd() *cobra.Command {
	var (
		regionArgs []string
		since      string
		channel    string
		category   string
		sort       string
		limit      int
		asJSON     bool
		raw        bool
		exhaustive bool
	)
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the local archive (no API quota spent)",
		Long: `Search answers from the local archive's full-text index at zero quota.

Whatever you type is treated as plain words (all must match; accents fold, so
"cafe" finds "Café"; Hindi and Japanese are found inside titles). --raw passes
the text to SQLite FTS5 as query syntax (AND, OR, NOT, "phrases", prefix*).

Results are one per video: regions it trended in, its best rank, when it was
last seen, its views, its category, and a snippet with the match highlighted
(bold on a terminal unless NO_COLOR is set or TERM is dumb, [brackets]
elsewhere, <mark>...</mark> in --json). --json also has category_id
and category (the name; "" when the archive has none for the id).

--category keeps one category: its id, or its name in any case, looked up in
the names fetches cached for the --region regions (every region's without
--region); an unknown name is an error that lists the known ones.

Relevance blends BM25 (title above tags above channel above description) with
how recently and how high the video trended. Ranking is exact: the results are
those of scoring every match, found without scoring most of a common word's
matches. --exhaustive scores every match (slow on common words; for checking).`,
		Example: `  ytrend search cricket --region IN --since 7d
  ytrend search "東京" --json
  ytrend search music --sort views --limit 5
  ytrend search final --category sports --region GB`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := store.Query{Text: strings.Join(args, " "), Channel: channel, Limit: limit, Raw: raw, Exhaustive: exhaustive}
			for _, r := range regionArgs {
				codes, err := parseRegions([]string{r})
				if err != nil {
					return usageError{fmt.Errorf("--region: %w", err)}
				}
				q.Regions = append(q.Regions, codes...)
			}
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return usageError{err}
				}
				q.Since = t
			}
			switch sort {
			case "relevance", "recent", "views":
				q.Sort = store.SortOrder(sort)
			default:
				return usageError{fmt.Errorf("--sort %q: allowed relevance, recent, views", sort)}
			}
			if limit < 1 || limit > 500 {
				return usageError{fmt.Errorf("--limit %d: allowed 1-500", limit)}
			}
			var bold *strings.Replacer // the marks to turn into bold, on a terminal
			switch {
			case asJSON:
				q.MarkOpen, q.MarkClose = markOpen, markEnd
			case isTerminal(c.stdout) && c.styled():
				q.MarkOpen, q.MarkClose = termMarks()
				bold = strings.NewReplacer(q.MarkOpen, boldOn, q.MarkClose, boldOff)
			default:
				q.MarkOpen, q.MarkClose = "[", "]"
			}
			a, err := c.open(cmd, openOpts{readOnly: true})
			if err != nil {
				return err
			}
			defer a.close()
			if q.Categories, err = categoryIDs(cmd.Context(), a.db, category, q.Regions); err != nil {
				return err
			}
			hits, err := a.db.Search(cmd.Context(), q)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, view.Hits(hits))
			}
			printHits(c.stdout, hits, bold, time.Now())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&regionArgs, "region", nil, "only videos that trended in this region (repeatable, or comma-separated)")
	f.StringVar(&since, "since", "", "only videos seen trending since: a duration (24h, 7d) or a date (2026-11-01)")
	f.StringVar(&channel, "channel", "", "only this channel (part of its title, or its id)")
	f.StringVar(&category, "category", "", categoryFlagHelp)
	f.StringVar(&sort, "sort", "relevance", "relevance, recent or views")
	f.IntVar(&limit, "limit", 20, "number of results (1-500)")
	f.BoolVar(&asJSON, "json", false, "print a JSON array")
	f.BoolVar(&raw, "raw", false, "treat QUERY as SQLite FTS5 query syntax")
	f.BoolVar(&exhaustive, "exhaustive", false, "score every match in one pass (same results; seconds for common words in a large archive)")
	return cmd
}

// parseSince reads --since: config.ParseSince, its errors named for the flag.
func parseSince(s string, now time.Time) (time.Time, error) {
	t, err := config.ParseSince(s, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("--since %w", err)
	}
	return t, nil
}

// printHits prints hits for a person. bold, when not nil, turns the
// snippets' highlight marks (termMarks) into bold once their text is
// escaped for the terminal.
func printHits(w io.Writer, hits []store.Hit, bold *strings.Replacer, now time.Time) {
	if len(hits) == 0 {
		fmt.Fprintln(w, "no matches")
		return
	}
	for i, h := range hits {
		views := "views hidden"
		if h.Views != nil {
			views = humanfmt.Count(*h.Views) + " views"
		}
		rank := "not charted"
		if h.BestRank > 0 {
			rank = fmt.Sprintf("best #%d", h.BestRank)
		}
		fmt.Fprintf(w, "%2d. %s\n    %s · %s · %s · %s in %s · seen %s ago\n", i+1, termLine(h.Title),
			termLine(h.ChannelTitle), termLine(categoryText(h.CategoryID, h.Category)), views, rank, regionList(h.Regions),
			config.FormatDuration(now.Sub(h.LastSeen).Round(time.Minute)))
		if h.Snippet != "" {
			s := termLine(h.Snippet)
			if bold != nil {
				s = bold.Replace(s)
			}
			fmt.Fprintf(w, "    %s\n", s)
		}
	}
}

// styled reports whether the user lets output to a terminal be styled:
// not with NO_COLOR set to anything (no-color.org), nor on a dumb terminal.
func (c *cli) styled() bool {
	if v, _ := c.lookupEnv("NO_COLOR"); v != "" {
		return false
	}
	term, _ := c.lookupEnv("TERM")
	return term != "dumb"
}

// termMarks returns highlight marks that no archive text can spell: a
// private-use character and a token drawn for this process. Snippets are
// escaped for the terminal with the marks in them (humanfmt.Terminal leaves
// them as they are), and only then do the marks become bold on and off, so
// an ESC[1m in an older archive's text prints as visible text and cannot
// leave the terminal in bold.
func termMarks() (open, close string) {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	tok := hex.EncodeToString(b[:])
	return "\ue000" + tok, "\ue001" + tok
}

func regionList(rs []regions.Code) string {
	if len(rs) == 0 {
		return "no region"
	}
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r.String())
	}
	return b.String()
}

// termLine is archive text as one line that is safe on a terminal: control
// characters shown as escapes (an archive imported before imports removed
// them may hold them; a run's error may quote an API's reply), and line
// breaks and tabs folded into spaces, so no field can forge a line or a
// column of a table.
func termLine(s string) string {
	return strings.Join(strings.Fields(humanfmt.Terminal(s)), " ")
}
