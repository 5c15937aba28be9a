package main

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/dataset"
	"github.com/ytrend/ytrend/ingest/sim"
)

type chartEntryJSON struct {
	Rank       int    `json:"rank"`
	VideoID    string `json:"video_id"`
	Title      string `json:"title"`
	CategoryID string `json:"category_id"`
	Category   string `json:"category"`
}

// Category names reach chart, history, search --json and export, and
// --category filters each by name (any case) or id.
func TestCategoryNamesAndFilterFlags(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{Seed: 3})
	if r := w.mustRun("fetch", "US", "--pages", "2", "--json"); !strings.Contains(r.stdout, `"units": 3`) || !strings.Contains(r.stdout, `"categories": 32`) {
		t.Errorf("first fetch of the day: want 3 units (2 pages, 1 category list):\n%s", r.stdout)
	}

	all := decode[[]chartEntryJSON](t, w.mustRun("chart", "US", "--limit", "0", "--json").stdout)
	if len(all) != 100 {
		t.Fatalf("%d entries", len(all))
	}
	count := map[string]int{}
	for _, e := range all {
		if e.Category == "" {
			t.Errorf("entry %d (%s) in category %s has no name", e.Rank, e.VideoID, e.CategoryID)
		}
		count[e.CategoryID]++
	}
	// The most common category of the chart, by its name in another case.
	top, name := "", ""
	for _, e := range all {
		if top == "" || count[e.CategoryID] > count[top] {
			top, name = e.CategoryID, e.Category
		}
	}
	for _, arg := range []string{strings.ToUpper(name), top} {
		got := decode[[]chartEntryJSON](t, w.mustRun("chart", "US", "--limit", "0", "--category", arg, "--json").stdout)
		if len(got) != count[top] {
			t.Errorf("chart --category %s: %d entries, want %d", arg, len(got), count[top])
		}
		prev := 0
		for _, e := range got {
			if e.CategoryID != top || e.Category != name || e.Rank <= prev {
				t.Errorf("chart --category %s: entry %+v", arg, e)
			}
			prev = e.Rank
		}
	}
	if human := w.mustRun("chart", "US", "--limit", "3").stdout; !strings.Contains(human, "CATEGORY") || !strings.Contains(human, all[0].Category) {
		t.Errorf("chart table without categories:\n%s", human)
	}

	r := w.run("chart", "US", "--category", "Muzak")
	if r.code != exitUsage || !strings.Contains(r.stderr, `--category "Muzak" is no category name known for US; known: `) ||
		!strings.Contains(r.stderr, "Autos & Vehicles, ") || !strings.Contains(r.stderr, "Music") {
		t.Errorf("unknown name: exit %d\n%s", r.code, r.stderr)
	}
	if r := w.run("export", "--region", "GB", "--category", "Music"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "no category names for GB yet") || r.stdout != "" {
		t.Errorf("a region without names: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	h := decode[map[string]any](t, w.mustRun("history", all[0].VideoID, "--json").stdout)
	if h["category_id"] != all[0].CategoryID || h["category"] != all[0].Category {
		t.Errorf("history: category %v %v, want %s %s", h["category_id"], h["category"], all[0].CategoryID, all[0].Category)
	}

	word := longestWord(all[0].Title)
	hits := decode[[]map[string]any](t, w.mustRun("search", word, "--json", "--category", all[0].Category).stdout)
	if len(hits) == 0 {
		t.Fatalf("search %q --category %q found nothing", word, all[0].Category)
	}
	for _, hit := range hits {
		if hit["category_id"] != all[0].CategoryID || hit["category"] != all[0].Category {
			t.Errorf("search hit %v %v, want %s", hit["category_id"], hit["category"], all[0].Category)
		}
	}

	out := w.mustRun("export", "--region", "US", "--category", strings.ToLower(name)).stdout
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != strings.Join(dataset.ColumnsExport, ",") ||
		!strings.HasSuffix(got, "description,region,rank,fetched_at,category") {
		t.Errorf("export header %s", got)
	}
	if len(recs) != 1+count[top] {
		t.Errorf("export --category: %d rows, want %d", len(recs)-1, count[top])
	}
	for _, rec := range recs[1:] {
		if rec[5] != top || rec[19] != name {
			t.Errorf("exported row in categoryId %s named %q", rec[5], rec[19])
		}
	}
}
