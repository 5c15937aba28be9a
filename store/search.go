package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/search"
)

// The archive's full-text search is package search's engine over the
// reader pool; these names keep the store the one front door for callers.

// Query is a search of the archive.
type Query = search.Query

// Hit is one video found by Search.
type Hit = search.Hit

// SortOrder orders search results.
type SortOrder = search.SortOrder

const (
	SortRelevance = search.SortRelevance // text relevance blended with trend (the default)
	SortRecent    = search.SortRecent    // most recently seen first
	SortViews     = search.SortViews     // most viewed first; hidden counts last
)

// Search limits.
const (
	DefaultLimit = search.DefaultLimit
	MaxLimit     = search.MaxLimit
)

// TermsVersion is the format of the stored term blobs; cached benchmark
// archives (testkit/archivetest) are keyed on it.
const TermsVersion = search.TermsVersion

// Search finds videos matching q. No match is an empty, non-nil slice. Text
// of any kind is safe: it never produces an SQL error (in Raw mode a syntax
// error is ErrBadQuery).
func (db *DB) Search(ctx context.Context, q Query) ([]Hit, error) {
	return db.search.Search(ctx, q)
}

// searchCategoryNames reads the cached names of the category ids of a
// search's hits (videos, by row id) inside its transaction: only those
// ids' names come back to Go (a category list per region the archive
// fetched, 30 or so each, was read into maps for every search).
func searchCategoryNames(query func(string, ...any) (*sql.Rows, error), videos []int64) (func(id string, in ...regions.Code) string, error) {
	n := categoryNames{byRegion: map[regions.Code]map[string]string{}, any: map[string]string{}}
	rows, err := query(sqlCategoryNamesOf, jsonIDs(videos))
	if err != nil {
		return nil, fmt.Errorf("store: category names: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var region, id, title string
		if err := rows.Scan(&region, &id, &title); err != nil {
			return nil, fmt.Errorf("store: category names: %w", err)
		}
		n.add(regions.Code(region), id, title)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: category names: %w", err)
	}
	return n.name, nil
}

// RegramStatus says how far the re-derivation of the index's gram column
// (migrations 0007 and 0009) has come.
type RegramStatus = search.RegramStatus

// RegramProgress reads where Regram stands.
func (db *DB) RegramProgress(ctx context.Context) (RegramStatus, error) {
	return search.RegramProgress(ctx, db.reader)
}

// Regram re-derives the index's grams and term counts of the videos stored
// before a pending upgrade, in short transactions from where it last
// stopped, until every row is done or ctx ends; progress, if set, is told
// after each step (search.Regram). Searches keep working throughout.
func (db *DB) Regram(ctx context.Context, progress func(RegramStatus)) error {
	n, err := search.Regram(ctx, db.writer, db.reader, progress)
	db.ftsWrites.Add(n)
	return err
}
