package search

import "strings"

// The statements of a search, by shape (raw text or not, region and
// channel filters, sort order). A search prepares those it runs when it
// first runs them (searcher.stmt), and the engine keeps them (Engine.keep).

// searchStatements are the queries of one search's statements.
type searchStatements struct {
	state, channels, docFreq, blocks, videos, regions string
	// candidates ranks the matches within a range of ids; byChannel is the
	// same for a channel filter matching too many channels to be facets.
	candidates, byChannel string
	// candidatesIn and byChannelIn rank a list of matches the probe read
	// (sqlCandidatesIn); probeIDs is that probe.
	candidatesIn, byChannelIn, probeIDs string
}

const (
	sqlArchiveState = `SELECT (SELECT max(last_page_at) FROM runs), (SELECT max(id) FROM videos), videos, tokens FROM archive_totals`
	sqlChannelMatch = `SELECT id FROM channels WHERE channel_id = ? OR instr(title_fold, ?) > 0`
	// The blocks of ids a search walks (search_walk.go), best bound first, a
	// page at a time: ?1 since, ?2 and ?3 the last block's sort key and id,
	// ?4 the page size.
	sqlBlocksBySeen = `SELECT block, max_seen, min_rank, max_views FROM video_blocks
		WHERE max_seen >= ?1 AND (max_seen, block) < (?2, ?3) ORDER BY max_seen DESC, block DESC LIMIT ?4`
	sqlBlocksByViews = `SELECT block, max_seen, min_rank, max_views FROM video_blocks
		WHERE max_seen >= ?1 AND (max_views, block) < (?2, ?3) ORDER BY max_views DESC, block DESC LIMIT ?4`
	// How many blocks hold a video seen since ?1.
	sqlBlocksSince = `SELECT count(*) FROM video_blocks WHERE max_seen >= ?1`
	// How many of the newest ?2 matches there are, and the oldest of them.
	sqlDocFreq = `SELECT count(*), min(id) FROM (SELECT -rowid AS id FROM video_fts WHERE video_fts MATCH ?1 ORDER BY rowid LIMIT ?2)`
	// The same count, and when it is under ?2 (every match read), the
	// matches themselves as a JSON array, for sqlCandidatesIn.
	sqlProbeIDs = `SELECT count(*), min(id), CASE WHEN count(*) < ?2 THEN json_group_array(id) END
		FROM (SELECT -rowid AS id FROM video_fts WHERE video_fts MATCH ?1 ORDER BY rowid LIMIT ?2)`
	// The ?2 most viewed matches of ?1 with a visible count (prepared when
	// first used: most searches never need it).
	sqlViewsTop = `SELECT -f.rowid, s.views FROM video_fts f JOIN video_stats s ON s.video = -f.rowid
		WHERE f.video_fts MATCH ?1 AND s.views IS NOT NULL ORDER BY s.views DESC, f.rowid LIMIT ?2`
	// The same, read from the most viewed videos down (migration 0013's
	// index; ?3 the most videos to test), each tested against the MATCH:
	// rows come in views order, ties newest id first, as sqlViewsTop's.
	sqlViewsByIndex = `SELECT s.video, s.views FROM (SELECT video, views FROM video_stats INDEXED BY video_stats_views
		WHERE views IS NOT NULL ORDER BY views DESC, video DESC LIMIT ?3) s
		WHERE EXISTS (SELECT 1 FROM video_fts f WHERE f.video_fts MATCH ?1 AND f.rowid = -s.video) LIMIT ?2`
	// The same in regions (?4, JSON), ?1 the MATCH without their facets:
	// each video read (at most ?3) is tested on its video_regions rows
	// first, a seek, and only those in a region (at most ?5) against the
	// MATCH, which a facet would make dearer.
	sqlViewsByIndexIn = `SELECT s.video, s.views FROM (SELECT v.video, v.views FROM (SELECT video, views
		FROM video_stats INDEXED BY video_stats_views WHERE views IS NOT NULL ORDER BY views DESC, video DESC LIMIT ?3) v
		WHERE EXISTS (SELECT 1 FROM video_regions r WHERE r.video = v.video AND r.region IN (SELECT value FROM json_each(?4)))
		LIMIT ?5) s
		WHERE EXISTS (SELECT 1 FROM video_fts f WHERE f.video_fts MATCH ?1 AND f.rowid = -s.video) LIMIT ?2`
	sqlHitVideos = `SELECT id, video_id, title, tags, channel_title, description, published_at_s, category_id FROM videos
		WHERE id IN (SELECT value FROM json_each(?))`
	sqlHitRegions = `SELECT video, region FROM video_regions WHERE video IN (SELECT value FROM json_each(?1))
		AND (?2 IS NULL OR region IN (SELECT value FROM json_each(?2))) ORDER BY video, region`
)

// sqlCandidates ranks the matches of a query within a range of video ids
// inside SQLite, so that only the best page of that range crosses into Go
// (each value read back through database/sql costs as much as scoring a
// candidate). ytrend_score (rank.go) scores each match that can still place
// in the page, -1 otherwise (in views order ytrend_keep tests and
// ytrend_rank scores); SQLite sorts and returns ?8 rows. The filters apply
// inside the scan.
//
// Parameters: ?1 regions (JSON), ?2 since (µs, 0 if none), ?3 the MATCH
// expression, ?4 and ?5 the lowest and highest rowid to read (the index's
// rowid is minus the video id), ?6 channel row ids (JSON), ?7 the ranking
// state's id, ?8 the page size, ?9 category ids (JSON; with categories
// only: a category is no facet of the index, so the scan reads each match's
// category from its videos row), ?10 and ?11 the last sighting and view
// count a video needs to place in the page the walk has so far (MinInt64 and
// -1 if anything can): plain comparisons that spare the ranking function
// most of a common word's older matches; ?12 the same for the best rank
// (MaxInt64). ?14 false makes ytrend_pass test each match on its video_cuts
// bounds (cuts.go) before the join seeks its video_stats row: the walk sets
// it with the rankState's cutTest.
func sqlCandidates(raw, regions, channels, categories bool, order SortOrder) string {
	var b strings.Builder
	// One row per matching region: a video's best rank and last sighting
	// over those regions. The join reads the video's few video_regions rows
	// and tests each against the list (+r.region keeps SQLite from seeking
	// once per region asked for), so a candidate costs the same whatever
	// the number of regions.
	seen, best := "seen", "best"
	if regions {
		seen, best = "max(seen)", "min(best)"
	}
	if order == SortViews {
		// Most matches of a views ranking cannot place (a fifth of them
		// could in the query set): ytrend_keep spares them ytrend_rank's
		// term blob.
		b.WriteString(`SELECT id, CASE WHEN ytrend_keep(?7, ` + seen + `, ` + best + `, views)
			THEN ytrend_rank(?7, ` + seen + `, ` + best + `, terms, len, fts_rank) ELSE -1.0 END AS score, `)
	} else {
		// Most matches can (nine in ten in the query set): one call tests
		// and scores them, which costs a match a call less.
		b.WriteString(`SELECT id, ytrend_score(?7, ` + seen + `, ` + best + `, views, terms, len, fts_rank) AS score, `)
	}
	if regions {
		b.WriteString(`max(seen) AS seen, min(best) AS best, views`)
	} else {
		b.WriteString(`seen, best, views`)
	}
	b.WriteString(` FROM (SELECT -f.rowid AS id, s.views AS views, s.doc_len AS len, s.terms AS terms, `)
	if raw {
		b.WriteString(`f.rank AS fts_rank, `)
	} else {
		b.WriteString(`NULL AS fts_rank, `)
	}
	if regions {
		b.WriteString(`r.last_seen AS seen, r.best_rank AS best FROM video_fts f JOIN video_stats s ON s.video = -f.rowid
			JOIN video_regions r ON r.video = -f.rowid AND +r.region IN (SELECT value FROM json_each(?1)) AND r.last_seen >= ?2`)
	} else {
		b.WriteString(`s.last_seen AS seen, s.best_rank AS best FROM video_fts f JOIN video_stats s ON s.video = -f.rowid`)
	}
	b.WriteString(` WHERE f.video_fts MATCH ?3 AND f.rowid BETWEEN ?4 AND ?5 AND (?14 OR ytrend_pass(?7, f.rowid))
		AND s.last_seen >= ?10 AND coalesce(s.views, -1) >= ?11 AND coalesce(s.best_rank, 1073741824) <= ?12`)
	if !regions {
		b.WriteString(` AND s.last_seen >= ?2`)
	}
	if channels {
		b.WriteString(` AND s.channel IN (SELECT value FROM json_each(?6))`)
	}
	if categories {
		b.WriteString(` AND (SELECT v.category_id FROM videos v WHERE v.id = -f.rowid) IN (SELECT value FROM json_each(?9))`)
	}
	b.WriteString(`)`)
	if regions {
		b.WriteString(` GROUP BY id`)
	}
	switch order {
	case SortRecent:
		b.WriteString(` ORDER BY seen DESC, score DESC, id DESC`)
	case SortViews:
		b.WriteString(` ORDER BY views IS NULL, views DESC, score DESC, id DESC`)
	default:
		b.WriteString(` ORDER BY score DESC, seen DESC, id DESC`)
	}
	b.WriteString(` LIMIT ?8`)
	return b.String()
}

// sqlCandidatesIn is sqlCandidates (not raw) over a list of video ids
// (?13, JSON) that a probe already found to be every match of the MATCH
// expression: the same filters, ranking and order, without reading the
// index's doclists a second time. A query of two words, or of a word and
// region facets, with few matches in common reads both doclists whole to
// find them, and did so twice. The rowid range (?4, ?5) bounds the list as
// it bounds the index (a range of one id, say, for viewsTop); ?3 is unused
// (it stays bound, so both statements take the same arguments).
func sqlCandidatesIn(regions, channels, categories bool, order SortOrder) string {
	q := sqlCandidates(false, regions, channels, categories, order)
	q = strings.Replace(q, "f.video_fts MATCH ?3 AND f.rowid BETWEEN ?4 AND ?5", "?3 IS NOT NULL AND -f.value BETWEEN ?4 AND ?5", 1)
	q = strings.Replace(q, "FROM video_fts f JOIN", "FROM json_each(?13) f JOIN", 1)
	// Only a walk tests bounds (?14 false); a list is ranked whole.
	q = strings.Replace(q, "(?14 OR ytrend_pass(?7, f.rowid))", "?14 IS NOT NULL", 1)
	return strings.ReplaceAll(q, "-f.rowid", "f.value")
}

// statements returns the queries of q's shape. Nothing is prepared here:
// which of them a search runs depends on what its probes find.
func (e *Engine) statements(q Query, pq parsedQuery) *searchStatements {
	st := searchStatements{state: sqlArchiveState, channels: sqlChannelMatch, docFreq: sqlDocFreq,
		blocks: sqlBlocksBySeen, videos: sqlHitVideos, regions: sqlHitRegions}
	if q.Sort == SortViews {
		st.blocks = sqlBlocksByViews
	}
	regions, cats := len(q.Regions) > 0, len(q.Categories) > 0
	st.candidates = sqlCandidates(pq.raw, regions, false, cats, q.Sort)
	if q.Channel != "" {
		st.byChannel = sqlCandidates(pq.raw, regions, true, cats, q.Sort)
	}
	if !pq.raw && !q.Exhaustive {
		st.probeIDs = sqlProbeIDs
		st.candidatesIn = sqlCandidatesIn(regions, false, cats, q.Sort)
		if q.Channel != "" {
			st.byChannelIn = sqlCandidatesIn(regions, true, cats, q.Sort)
		}
	}
	return &st
}
