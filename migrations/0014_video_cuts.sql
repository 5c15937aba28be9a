-- 0014_video_cuts: each video's last sighting, best chart rank and view
-- count, rounded to bounds and packed 256 videos to a row, so that a search
-- tests a match against the cut of the page it holds without seeking the
-- match's video_stats row.
--
-- A walk (search/search_walk.go) ranks the matches of a range of blocks and,
-- once its page is full, keeps only those whose last sighting, best rank or
-- view count could still place them: about six in ten matches of the mixed
-- query set at a million videos fail that test, and each used to cost a seek
-- into video_stats (a third of a search's CPU). One read of this table gives
-- the bounds of 256 videos instead.
--
-- cuts is 256 entries of 10 ASCII hex digits, entry i for video (part << 8) + i:
--   6 digits  the last sighting in hours since the epoch, rounded up
--             (ffffff: later than that can say);
--   2 digits  the best chart rank, 255 if never charted or lower (ff);
--   2 digits  the view count's hex length (0: hidden; f: 15 digits or more)
--             and its first hex digit, so views < (digit + 1) * 16^(length - 1).
-- Each part is an upper bound of what it encodes (a lower one for the rank),
-- never tighter than the value: a test that fails on it fails on the value.
-- An entry no video holds is all zeros; no match can be such a video.
--
-- Hex digits, substr and printf keep the triggers to SQL every SQLite has.
-- The column is a BLOB so that substr counts bytes, not characters.
CREATE TABLE video_cuts (
    part INTEGER PRIMARY KEY,  -- video_stats.video >> 8
    cuts BLOB    NOT NULL      -- 2,560 bytes: 256 entries of 10 hex digits
) STRICT;

WITH RECURSIVE pos (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM pos WHERE i < 255),
parts (part) AS (SELECT DISTINCT video >> 8 FROM video_stats)
INSERT INTO video_cuts (part, cuts)
SELECT part, CAST(group_concat(CASE WHEN s.video IS NULL THEN '0000000000' ELSE
        printf('%06x', min(max((s.last_seen + 3599999999) / 3600000000, 0), 16777215))
        || printf('%02x', min(max(coalesce(s.best_rank, 255), 0), 255))
        || CASE WHEN s.views IS NULL THEN '00'
            ELSE printf('%x', min(length(printf('%x', s.views)), 15)) || substr(printf('%x', s.views), 1, 1) END
    END, '' ORDER BY i) AS BLOB)
FROM parts JOIN pos LEFT JOIN video_stats s ON s.video = (part << 8) + i
GROUP BY part;

CREATE TRIGGER video_cuts_insert AFTER INSERT ON video_stats BEGIN
    INSERT INTO video_cuts (part, cuts) VALUES (NEW.video >> 8, CAST(hex(zeroblob(1280)) AS BLOB))
        ON CONFLICT (part) DO NOTHING;
    UPDATE video_cuts SET cuts = CAST(substr(cuts, 1, (NEW.video & 255) * 10)
        || printf('%06x', min(max((NEW.last_seen + 3599999999) / 3600000000, 0), 16777215))
        || printf('%02x', min(max(coalesce(NEW.best_rank, 255), 0), 255))
        || CASE WHEN NEW.views IS NULL THEN '00'
            ELSE printf('%x', min(length(printf('%x', NEW.views)), 15)) || substr(printf('%x', NEW.views), 1, 1) END
        || substr(cuts, (NEW.video & 255) * 10 + 11) AS BLOB)
        WHERE part = NEW.video >> 8;
END;

-- Written only when an entry changes: a re-sighting within the hour at the
-- same rank and about the same views leaves the row alone.
CREATE TRIGGER video_cuts_update AFTER UPDATE OF last_seen, best_rank, views ON video_stats
    WHEN (NEW.last_seen + 3599999999) / 3600000000 IS NOT (OLD.last_seen + 3599999999) / 3600000000
        OR NEW.best_rank IS NOT OLD.best_rank
        OR (NEW.views IS NULL) IS NOT (OLD.views IS NULL)
        OR length(printf('%x', NEW.views)) IS NOT length(printf('%x', OLD.views))
        OR substr(printf('%x', NEW.views), 1, 1) IS NOT substr(printf('%x', OLD.views), 1, 1)
BEGIN
    UPDATE video_cuts SET cuts = CAST(substr(cuts, 1, (NEW.video & 255) * 10)
        || printf('%06x', min(max((NEW.last_seen + 3599999999) / 3600000000, 0), 16777215))
        || printf('%02x', min(max(coalesce(NEW.best_rank, 255), 0), 255))
        || CASE WHEN NEW.views IS NULL THEN '00'
            ELSE printf('%x', min(length(printf('%x', NEW.views)), 15)) || substr(printf('%x', NEW.views), 1, 1) END
        || substr(cuts, (NEW.video & 255) * 10 + 11) AS BLOB)
        WHERE part = NEW.video >> 8;
END;

CREATE TRIGGER video_cuts_delete AFTER DELETE ON video_stats BEGIN
    UPDATE video_cuts SET cuts = CAST(substr(cuts, 1, (OLD.video & 255) * 10) || '0000000000'
        || substr(cuts, (OLD.video & 255) * 10 + 11) AS BLOB)
        WHERE part = OLD.video >> 8;
END;
