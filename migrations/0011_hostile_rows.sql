-- 0011_hostile_rows: one-time repairs of stored data that need Go.
--
-- Imports used to store what YouTube itself would never send (issue 22): rows
-- dated in the future, which stay every video's newest sighting for good;
-- titles, descriptions and tags past YouTube's limits; thumbnails that are not
-- on ytimg.com. Imports now refuse or cut them; store.DB.Repair, run by
-- `ytrend migrate`, does the same to what older imports stored, once, and
-- marks its row done.
CREATE TABLE data_repairs (
    name TEXT    PRIMARY KEY,
    done INTEGER NOT NULL DEFAULT 0
) STRICT;

-- An empty archive has nothing to repair.
INSERT INTO data_repairs (name, done) SELECT 'hostile_rows', NOT EXISTS (SELECT 1 FROM videos);
