-- glued_words: FTS5's Unicode tables predate many emoji (U+1F900-U+1FAFF and
-- others) and keep them inside a token, so a word written against one
-- (Дорого🤍Идеальные, 🥔EP.3-1) was indexed only as part of a longer token
-- no query matches. New pages also put the words of such tokens in the gram
-- column; the rows stored before are re-derived by store.DB.Regram (run by
-- `ytrend migrate` and by the daily maintenance, in short transactions) from
-- next_id on, together with any other pending upgrade.

-- An empty archive has nothing to upgrade.
INSERT INTO index_upgrades (name, done) SELECT 'glued_words', NOT EXISTS (SELECT 1 FROM videos);
