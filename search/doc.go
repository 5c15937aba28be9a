// Package search is the archive's full-text search engine: the Go mirror of
// the FTS5 tokenizer (with its fold tables, generated from FTS5 itself),
// query parsing, snippets, the ranking formula and the block walk that
// finds the best page without scoring every match. It reads an archive that
// package store writes, through the store's pool of read connections; the
// store is the front door (store.DB.Search) and owns every table.
//
// Key decision: the engine ranks with its own BM25 (rank.go), not FTS5's
// bm25(), so that a search can stop as soon as no unread block of ids could
// place a video in the page, and the page is still exactly what ranking
// every match would give.
//
// # Tokenizing
//
// unicode61 with remove_diacritics 2 folds Latin accents (cafe finds Café);
// categories 'L* N* Co M*' keeps Devanagari vowel signs and viramas inside
// words (क्रिकेट stays one word). Chinese, Japanese, Korean, Thai, Lao, Khmer
// and Myanmar are written without spaces, so every column's runs in those
// scripts are also indexed as overlapping bigrams (東京の天気 -> 東京 京の の天
// 天気 気) in the gram column (named title_grams from when only titles had
// them), and query text in those scripts is matched as a phrase of bigrams
// there: 東京 finds 東京の天気予報 in a title, 日帰り finds a description's
// 東京からの日帰りで... A bigram never spans two runs, so nothing matches
// across two columns or two tags. Each column's grams count in that column
// for ranking (a description word weighs as description text). FTS5's
// Unicode tables also predate many emoji and keep them inside a token
// (Дорого🤍Идеальные is one FTS5 token); the store splits there as at any
// emoji, and the gram column also holds the words of each such token
// (дорого идеальные), so each is found, alone or as a phrase, and counts in
// its own column. Archives indexed before either are upgraded in place by
// [Regram] (regram.go; the store runs it at migrate and in the daily
// maintenance). text.go mirrors the FTS5 tokenizer in Go (fold_table.go is
// generated from FTS5 itself), so the engine counts terms and builds
// snippets without asking SQLite.
//
// # Queries
//
// What a person types is plain words ([Query.Text]): each word, or "quoted
// phrase", must match; FTS5 operators, column filters, '*', '-', stray quotes,
// emoji and control characters are text, never syntax. The MATCH expression
// is built only from quoted runs of letters, digits and marks, so no input
// can produce an SQL error. [Query.Raw] opts in to FTS5 syntax; errors are
// then [ErrBadQuery].
//
// Region and channel filters are facet terms of the MATCH: the facets column
// holds tokens that begin with the noncharacter U+FDD0, which FTS5 indexes as
// part of a word and the Go tokenizer (so any typed text) never produces.
// FTS5 intersects them with the words, skipping what cannot match, so a
// filter on a small region or channel costs no more than on a big one. Not
// for a raw query: its text is FTS5 syntax that parentheses cannot contain
// ("a) OR (b"), so its filters are SQL conditions only (the region join,
// the channel list, the since bound), and hold whatever the text says.
//
// # Ranking, exactly
//
// Relevance is BM25 with the title weighted above tags above channel above
// description, multiplied by how recently and how high the video trended
// (the formula is in rank.go). The store computes it, not FTS5's bm25():
// that function counts the whole doclist of every query term to get its IDF
// on every query, about 100 ms for a common word at a million videos,
// whatever the LIMIT. The IDF of each term is exact up to 64 matches and
// estimated above that from the density of its newest matches; both ways of
// ranking below use the same estimate.
//
// Every search returns the page that scoring every match would give, ties
// broken the same way (score, then last sighting, then id), without scoring
// every match of a common word. video_blocks keeps, per block of 1,024
// video ids, the newest sighting, best chart rank and most views of its
// videos (triggers on video_stats keep it, whatever writes). A search walks
// the blocks best bound first — newest sighting first, or most views first
// for --sort views — ranks a group of blocks at a time inside SQLite (the
// ytrend_score function scores, SQLite sorts, only the group's best page
// crosses into Go), and stops once no block left could place a video in the
// page it holds: for relevance, BM25 cannot exceed Σ idf·(k1+1) and the
// trend factor cannot exceed that of a #1 video seen when the block last
// was. Within a group, plain comparisons on the last sighting, best rank or
// view count keep most older matches from being scored at all, and most of
// them are dropped before their statistics are read: video_cuts packs
// bounds of those three values for 256 videos to a row, and a match is
// tested on its bounds first (cuts.go). A query with
// fewer than 1,024 matches, a raw query (FTS5's bm25 has no bound to stop
// on) and --sort views over a few percent of the archive are ranked in one
// pass; in views order that pass reads only each match's view count and
// ranks just the most viewed (ties included). Many matches in views order
// are found from the most viewed videos down instead (the views index),
// each tested on its regions, if any, before the MATCH. Several regions in
// views order are counted exactly through their facets up to where the
// index or a walk pays, so regions with few matches cost little, however
// many are asked for.
// search_walk.go has the details; [Query.Exhaustive] ranks every
// match in one pass, and is what the tests compare the walk with.
package search
