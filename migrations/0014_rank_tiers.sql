-- 0014_rank_tiers: rank-tier facets. A video whose best chart rank is at
-- most 3, 10 or 30 carries a facet for each such tier (U+FDD0 't' tier;
-- search.RankTiers and search.TierFacet), so that once a search's page is
-- full and only videos charted that high can still enter it, FTS5 skips the
-- other matches inside the index (search/search_walk.go). New pages add
-- them as ranks improve (store/write.go, classify); this gives the rows
-- stored before theirs: the index forgets those rows as they were indexed,
-- their facets gain the tiers, and the index takes them again, in rowid
-- order (one segment, not one per row).
INSERT INTO video_fts (video_fts, rowid, title, tags, channel_title, description, title_grams, facets)
    SELECT 'delete', v.fkey, v.title, v.tags, v.channel_title, v.description, v.title_grams, v.facets
    FROM video_stats s JOIN videos v ON v.id = s.video WHERE s.best_rank <= 30 ORDER BY v.fkey;

UPDATE videos SET facets = facets || (SELECT
        iif(s.best_rank <= 3, ' ' || char(64976) || 't3', '') ||
        iif(s.best_rank <= 10, ' ' || char(64976) || 't10', '') ||
        ' ' || char(64976) || 't30'
    FROM video_stats s WHERE s.video = videos.id)
WHERE id IN (SELECT video FROM video_stats WHERE best_rank <= 30);

INSERT INTO video_fts (rowid, title, tags, channel_title, description, title_grams, facets)
    SELECT v.fkey, v.title, v.tags, v.channel_title, v.description, v.title_grams, v.facets
    FROM video_stats s JOIN videos v ON v.id = s.video WHERE s.best_rank <= 30 ORDER BY v.fkey;
