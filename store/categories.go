package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/regions"
)

// Category is one video category as videoCategories.list names it for a
// region (the API's names are English whatever the region).
type Category struct {
	Region regions.Code
	ID     string
	Title  string
	// Assignable is the API's snippet.assignable; nil for a name learned
	// from an imported ytrend export, which does not carry it.
	Assignable *bool
	FetchedAt  time.Time
}

// ErrUnknownCategory is wrapped by CategoryIDs' error for a name no cached
// list holds; the message lists the names it knows.
var ErrUnknownCategory = errors.New("store: unknown category")

const (
	sqlCategoriesFetched = `SELECT max(fetched_at) FROM categories WHERE region = ? AND assignable IS NOT NULL`
	// A name the API gave replaces any; one from an import only fills a gap
	// or replaces an older imported one.
	sqlCategoryUpsert = `INSERT INTO categories (region, category_id, title, assignable, fetched_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (region, category_id) DO UPDATE SET title = excluded.title, assignable = excluded.assignable,
			fetched_at = excluded.fetched_at
		WHERE excluded.assignable IS NOT NULL
			OR (categories.assignable IS NULL AND excluded.fetched_at > categories.fetched_at)`
	// A newer list drops the API's ids it no longer holds.
	sqlCategoriesDropStale = `DELETE FROM categories WHERE region = ?1 AND assignable IS NOT NULL AND fetched_at < ?2`
	sqlCategoriesList      = `SELECT region, category_id, title, assignable, fetched_at FROM categories
		WHERE ?1 IS NULL OR region IN (SELECT value FROM json_each(?1))
		ORDER BY region, CAST(category_id AS INTEGER), category_id`
)

// CategoriesFetchedAt returns when videoCategories.list last answered for
// region (names learned from imports do not count); the zero time if never.
func (db *DB) CategoriesFetchedAt(ctx context.Context, region regions.Code) (time.Time, error) {
	var at sql.NullInt64
	if err := db.reader.QueryRowContext(ctx, sqlCategoriesFetched, string(region)).Scan(&at); err != nil {
		return time.Time{}, fmt.Errorf("store: categories of %s: %w", region, err)
	}
	if !at.Valid {
		return time.Time{}, nil
	}
	return micros(at.Int64), nil
}

// SaveCategories stores videoCategories.list's answer for region, fetched at
// at: it replaces the region's previous answer whole (names learned from
// imports stay where the answer has no such id). Each category's Region,
// FetchedAt and a nil Assignable are filled in.
func (db *DB) SaveCategories(ctx context.Context, region regions.Code, at time.Time, cats []Category) error {
	if !regions.Valid(region) {
		return fmt.Errorf("store: save categories: %q is not a region code", region)
	}
	if at.IsZero() {
		return errors.New("store: save categories: no fetch time")
	}
	for i := range cats {
		cats[i].Region, cats[i].FetchedAt = region, at
		if cats[i].Assignable == nil {
			f := false
			cats[i].Assignable = &f
		}
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: save categories of %s: %w", region, err)
	}
	defer tx.Rollback()
	if err := upsertCategories(ctx, tx, cats); err != nil {
		return fmt.Errorf("store: save categories of %s: %w", region, err)
	}
	if _, err := tx.ExecContext(ctx, sqlCategoriesDropStale, string(region), at.UnixMicro()); err != nil {
		return fmt.Errorf("store: save categories of %s: %w", region, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: save categories of %s: %w", region, err)
	}
	return nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func upsertCategories(ctx context.Context, ex execer, cats []Category) error {
	for _, c := range cats {
		id, title := strings.TrimSpace(c.ID), strings.TrimSpace(c.Title)
		if id == "" || title == "" {
			continue
		}
		var assignable any
		if c.Assignable != nil {
			assignable = *c.Assignable
		}
		if _, err := ex.ExecContext(ctx, sqlCategoryUpsert, string(c.Region), id, title, assignable, c.FetchedAt.UnixMicro()); err != nil {
			return err
		}
	}
	return nil
}

// Categories returns the cached category names of the given regions (all
// regions when none is given), by region, then by numeric id.
func (db *DB) Categories(ctx context.Context, rs ...regions.Code) ([]Category, error) {
	return listCategories(ctx, db.reader, rs)
}

func listCategories(ctx context.Context, q querier, rs []regions.Code) ([]Category, error) {
	var filter any
	if len(rs) > 0 {
		filter = jsonIDs(codeStrings(rs))
	}
	rows, err := q.QueryContext(ctx, sqlCategoriesList, filter)
	if err != nil {
		return nil, fmt.Errorf("store: categories: %w", err)
	}
	defer rows.Close()
	out := []Category{}
	for rows.Next() {
		var c Category
		var region string
		var assignable sql.NullBool
		var at int64
		if err := rows.Scan(&region, &c.ID, &c.Title, &assignable, &at); err != nil {
			return nil, fmt.Errorf("store: categories: %w", err)
		}
		c.Region, c.FetchedAt = regions.Code(region), micros(at)
		if assignable.Valid {
			b := assignable.Bool
			c.Assignable = &b
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: categories: %w", err)
	}
	return out, nil
}

func codeStrings(rs []regions.Code) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

// CategoryIDs reads a --category argument: a numeric id is taken as it is;
// anything else is a name, matched ignoring case against the cached names
// of the given regions (every region when none is given). A name can stand
// for several ids (the API lists "Comedy" as 23 and, not assignable, 34):
// all of them are returned, sorted. An unknown name is an error wrapping
// ErrUnknownCategory that lists the names known there.
func (db *DB) CategoryIDs(ctx context.Context, arg string, rs ...regions.Code) ([]string, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return nil, fmt.Errorf("%w: empty category", ErrUnknownCategory)
	}
	if _, err := strconv.ParseUint(arg, 10, 32); err == nil {
		return []string{arg}, nil
	}
	cats, err := db.Categories(ctx, rs...)
	if err != nil {
		return nil, err
	}
	var ids, names []string
	for _, c := range cats {
		if strings.EqualFold(c.Title, arg) && !slices.Contains(ids, c.ID) {
			ids = append(ids, c.ID)
		}
		if !slices.Contains(names, c.Title) {
			names = append(names, c.Title)
		}
	}
	if len(ids) > 0 {
		slices.SortFunc(ids, compareIDs)
		return ids, nil
	}
	where := "any region"
	if len(rs) > 0 {
		where = strings.Join(codeStrings(rs), ", ")
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: %q: the archive has no category names for %s yet (a fetch stores them); give a category id instead",
			ErrUnknownCategory, arg, where)
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	for i, n := range names {
		names[i] = humanfmt.Listed(n)
	}
	return nil, fmt.Errorf("%w: %q is no category name known for %s; known: %s", ErrUnknownCategory, arg, where,
		strings.Join(names, ", "))
}

func compareIDs(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return x - y
	}
	return strings.Compare(a, b)
}

// categoryNames names category ids: per region, and for a region that has
// no name for an id, any region's.
type categoryNames struct {
	byRegion map[regions.Code]map[string]string
	any      map[string]string
}

// add names id in region; the first region added for an id names it in
// any other.
func (n categoryNames) add(region regions.Code, id, title string) {
	m := n.byRegion[region]
	if m == nil {
		m = map[string]string{}
		n.byRegion[region] = m
	}
	m[id] = title
	if _, ok := n.any[id]; !ok {
		n.any[id] = title
	}
}

// sqlCategoryNamesOf is the cached names of the category ids of some
// videos (?1, JSON row ids), in sqlCategoriesList's order, so that the same
// region names an id in any other. The ids are compared as stored: passing
// them through JSON would turn bytes that are not UTF-8 (an archive another
// program wrote) into U+FFFD, and lose their names.
const sqlCategoryNamesOf = `SELECT region, category_id, title FROM categories
	WHERE category_id IN (SELECT category_id FROM videos WHERE id IN (SELECT value FROM json_each(?1)))
	ORDER BY region, CAST(category_id AS INTEGER), category_id`

const sqlCategoryNames = `SELECT region, title FROM categories WHERE category_id = ? ORDER BY region`

// namesOfCategory loads one id's names in every region; q is
// sqlCategoryNames prepared.
func namesOfCategory(ctx context.Context, q *sql.Stmt, id string) (categoryNames, error) {
	n := categoryNames{byRegion: map[regions.Code]map[string]string{}, any: map[string]string{}}
	rows, err := q.QueryContext(ctx, id)
	if err != nil {
		return n, fmt.Errorf("store: category names: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var region, title string
		if err := rows.Scan(&region, &title); err != nil {
			return n, fmt.Errorf("store: category names: %w", err)
		}
		n.byRegion[regions.Code(region)] = map[string]string{id: title}
		if _, ok := n.any[id]; !ok {
			n.any[id] = title
		}
	}
	return n, rows.Err()
}

// name is id's name in the first of rs that has one, else in any region;
// "" when no cached list names it.
func (n categoryNames) name(id string, rs ...regions.Code) string {
	for _, r := range rs {
		if t, ok := n.byRegion[r][id]; ok {
			return t
		}
	}
	return n.any[id]
}
