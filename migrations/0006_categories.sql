-- 0006_categories: video category names (issue 11).
--
-- videoCategories.list names a region's categories (1 unit a call). ytrend
-- asks at most once per region per Pacific quota day, before a fetch, and
-- keeps the answer here; chart, history, search and export read names from
-- it. A region's list is replaced whole by a newer answer.
--
-- assignable is the API's snippet.assignable (1/0). It is NULL for a name
-- learned from an imported ytrend export, which carries names but not the
-- flag: such rows only fill gaps, never replace a name the API gave, and do
-- not count as "fetched today".
CREATE TABLE categories (
    region      TEXT    NOT NULL,
    category_id TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    assignable  INTEGER CHECK (assignable IN (0, 1)),
    fetched_at  INTEGER NOT NULL,             -- unix µs of the answer (or of the imported sighting)
    PRIMARY KEY (region, category_id)
) STRICT, WITHOUT ROWID;
