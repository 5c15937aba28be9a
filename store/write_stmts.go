package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/ytrend/ytrend/search"
)

// pageStatements are the statements of one SavePage.
type pageStatements struct {
	existing, channelIDs, upsertChannel, updateVideo, addFacets, ftsDelete, ftsInsert, totals, runProgress *sql.Stmt
	insertVideos, stats, snapshots, regions                                                                *sql.Stmt // sized by the page
}

func (db *DB) pageStatements(ctx context.Context, rows int) (*pageStatements, error) {
	var st pageStatements
	var err error
	get := func(key string, build func() string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = db.prepared(ctx, key, build)
		return s
	}
	fixed := func(q string) func() string { return func() string { return q } }
	st.existing = get("existing", fixed(sqlExisting))
	st.channelIDs = get("channelids", fixed(sqlChannelIDs))
	st.upsertChannel = get("upsertchannel", fixed(sqlUpsertChan))
	st.updateVideo = get("updatevideo", fixed(sqlUpdateVideo))
	st.addFacets = get("addfacets", fixed(sqlAddFacets))
	st.ftsDelete = get("ftsdelete", fixed(search.IndexDeleteSQL))
	st.ftsInsert = get("ftsinsert", fixed(search.IndexInsertSQL))
	st.totals = get("totals", fixed(sqlTotals))
	st.runProgress = get("runprogress", fixed(sqlRunProgress))
	if rows > 0 {
		st.insertVideos = get(fmt.Sprintf("insertvideos/%d", rows), func() string { return sqlInsertVideos(rows) })
		st.stats = get(fmt.Sprintf("stats/%d", rows), func() string { return sqlStats(rows) })
		st.snapshots = get(fmt.Sprintf("snapshots/%d", rows), func() string { return sqlSnapshots(rows) })
		st.regions = get(fmt.Sprintf("regions/%d", rows), func() string { return sqlRegions(rows) })
	}
	return &st, err
}

// jsonIDs encodes ids for json_each.
func jsonIDs[T ~int64 | ~string](ids []T) string {
	b, _ := json.Marshal(ids)
	return string(b)
}
