-- 0013_views_index: video_stats by view count, so that a search in views
-- order can read the most viewed videos first and test each against the
-- MATCH, instead of reading every match of a common word to find its most
-- viewed (search/search_walk.go, viewsByIndex). About 12 MB at a million
-- videos; built in about a second there.
CREATE INDEX video_stats_views ON video_stats (views);
