-- Index upgrades that re-derive stored data in Go, resumable.
--
-- grams_every_column: the gram column of the full-text index (still named
-- title_grams) used to hold only the title's CJK/Thai bigrams, so Japanese,
-- Chinese and Thai words in tags, channel titles and descriptions were found
-- only as whole runs. New pages index grams of every column; the rows stored
-- before are re-derived by store.DB.Regram (run by `ytrend migrate` and by
-- the daily maintenance, in short transactions) from next_id on.
CREATE TABLE index_upgrades (
    name    TEXT    PRIMARY KEY,
    next_id INTEGER NOT NULL DEFAULT 0,   -- videos.id to resume from
    done    INTEGER NOT NULL DEFAULT 0    -- 1 once every row is upgraded
) STRICT;

-- An empty archive has nothing to upgrade.
INSERT INTO index_upgrades (name, done) SELECT 'grams_every_column', NOT EXISTS (SELECT 1 FROM videos);
