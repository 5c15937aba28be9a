package store

import (
	"fmt"
	"sync"

	"github.com/ytrend/ytrend/search"
)

// channels returns the row ids of the page's channels, adding the new ones
// and renaming the renamed ones. Channel rows are never deleted, so ids this
// process has committed are cached: a page of known channels with known
// titles reads nothing.
func (w writeTx) channels(rows []videoRow) (map[string]int64, error) {
	titles := map[string]string{}
	var cids []string
	for _, r := range rows {
		k := channelKey(r.v)
		if _, ok := titles[k]; !ok {
			titles[k] = r.v.ChannelTitle
			cids = append(cids, k)
		}
	}
	out := make(map[string]int64, len(cids))
	var unknown []string
	w.chans.mu.Lock()
	for _, cid := range cids {
		if c, ok := w.chans.m[cid]; ok && c.title == titles[cid] {
			out[cid] = c.id
		} else {
			unknown = append(unknown, cid)
		}
	}
	w.chans.mu.Unlock()
	if len(unknown) == 0 {
		return out, nil
	}
	rs, err := w.query(w.st.channelIDs, jsonIDs(unknown))
	if err != nil {
		return nil, fmt.Errorf("store: save page: channels: %w", err)
	}
	var stale []string
	found := map[string]bool{}
	for rs.Next() {
		var cid, title string
		var id int64
		if err := rs.Scan(&cid, &id, &title); err != nil {
			rs.Close()
			return nil, fmt.Errorf("store: save page: channels: %w", err)
		}
		out[cid], found[cid] = id, true
		if title != titles[cid] {
			stale = append(stale, cid)
		}
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: save page: channels: %w", err)
	}
	for _, cid := range unknown {
		if !found[cid] {
			stale = append(stale, cid)
		}
	}
	for _, cid := range stale {
		var id int64
		err := w.tx.StmtContext(w.ctx, w.st.upsertChannel).QueryRowContext(w.ctx, cid, titles[cid], search.Fold(titles[cid])).Scan(&id)
		if err != nil {
			return nil, fmt.Errorf("store: save page: channel %s: %w", cid, err)
		}
		out[cid] = id
	}
	for _, cid := range unknown {
		*w.learned = append(*w.learned, channelEntry{cid: cid, id: out[cid], title: titles[cid]})
	}
	return out, nil
}

// channelCache maps channel ids to channels.id and the title last stored.
type channelCache struct {
	mu sync.Mutex
	m  map[string]channelEntry
}

type channelEntry struct {
	cid   string
	id    int64
	title string
}

const channelCacheMax = 200_000

// remember adds entries committed by a transaction.
func (c *channelCache) remember(es []channelEntry) {
	if len(es) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > channelCacheMax {
		c.m = map[string]channelEntry{}
	}
	for _, e := range es {
		c.m[e.cid] = e
	}
}
