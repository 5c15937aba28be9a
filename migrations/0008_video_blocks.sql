-- Upper bounds for exact ranking with an early stop.
--
-- video_blocks holds, for every block of 1,024 consecutive video ids
-- (video_stats.video >> 10), the newest sighting, the best chart rank and the
-- most views of any video in it. A search walks the blocks best bound first
-- and stops once no block left could place a video in the page it has
-- (store/search_walk.go): the ranking is the exhaustive one, without scoring
-- every match of a common word.
--
-- The triggers keep each bound at the extreme of every value its videos have
-- ever held, whichever code path writes video_stats (pages, imports,
-- upgrades), and write the block's row only when a bound moves: most rows of
-- a page share a block and a fetch time. A value that later shrinks (views corrected downwards, a video
-- deleted) leaves its block's bound loose, never wrong.
CREATE TABLE video_blocks (
    block     INTEGER PRIMARY KEY,  -- video_stats.video >> 10
    max_seen  INTEGER NOT NULL,     -- newest last_seen, unix µs
    min_rank  INTEGER,              -- best best_rank; NULL if none of its videos ever charted
    max_views INTEGER NOT NULL      -- most views; -1 if every count is hidden
) STRICT;

CREATE INDEX video_blocks_seen ON video_blocks (max_seen);
CREATE INDEX video_blocks_views ON video_blocks (max_views);

INSERT INTO video_blocks (block, max_seen, min_rank, max_views)
    SELECT video >> 10, max(last_seen), min(best_rank), max(coalesce(views, -1))
    FROM video_stats GROUP BY video >> 10;

CREATE TRIGGER video_blocks_insert AFTER INSERT ON video_stats BEGIN
    INSERT INTO video_blocks (block, max_seen, min_rank, max_views)
        VALUES (NEW.video >> 10, NEW.last_seen, NEW.best_rank, coalesce(NEW.views, -1))
        ON CONFLICT (block) DO UPDATE SET
            max_seen  = max(max_seen, excluded.max_seen),
            min_rank  = coalesce(min(min_rank, excluded.min_rank), min_rank, excluded.min_rank),
            max_views = max(max_views, excluded.max_views)
        WHERE excluded.max_seen > max_seen OR excluded.max_views > max_views
            OR excluded.min_rank < coalesce(min_rank, excluded.min_rank + 1);
END;

CREATE TRIGGER video_blocks_update AFTER UPDATE OF last_seen, best_rank, views ON video_stats BEGIN
    INSERT INTO video_blocks (block, max_seen, min_rank, max_views)
        VALUES (NEW.video >> 10, NEW.last_seen, NEW.best_rank, coalesce(NEW.views, -1))
        ON CONFLICT (block) DO UPDATE SET
            max_seen  = max(max_seen, excluded.max_seen),
            min_rank  = coalesce(min(min_rank, excluded.min_rank), min_rank, excluded.min_rank),
            max_views = max(max_views, excluded.max_views)
        WHERE excluded.max_seen > max_seen OR excluded.max_views > max_views
            OR excluded.min_rank < coalesce(min_rank, excluded.min_rank + 1);
END;
