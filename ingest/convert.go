package ingest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/youtube/v3"

	"github.com/ytrend/ytrend/store"
)

// rawList is the part of a videos.list reply the typed client loses: which
// statistics were present at all.
type rawList struct {
	Items []struct {
		ID         string `json:"id"`
		Statistics *struct {
			ViewCount    *string `json:"viewCount"`
			LikeCount    *string `json:"likeCount"`
			CommentCount *string `json:"commentCount"`
		} `json:"statistics"`
	} `json:"items"`
}

type rawStats struct{ views, likes, comments *int64 }

// parseRawStats reads the statistics as sent, nil where a count is absent.
func parseRawStats(body []byte) (map[string]rawStats, error) {
	var rl rawList
	if err := json.Unmarshal(body, &rl); err != nil {
		return nil, err
	}
	out := make(map[string]rawStats, len(rl.Items))
	for _, it := range rl.Items {
		if it.Statistics == nil {
			out[it.ID] = rawStats{}
			continue
		}
		var rs rawStats
		var err error
		if rs.views, err = count(it.Statistics.ViewCount); err != nil {
			return nil, fmt.Errorf("video %s viewCount: %w", it.ID, err)
		}
		if rs.likes, err = count(it.Statistics.LikeCount); err != nil {
			return nil, fmt.Errorf("video %s likeCount: %w", it.ID, err)
		}
		if rs.comments, err = count(it.Statistics.CommentCount); err != nil {
			return nil, fmt.Errorf("video %s commentCount: %w", it.ID, err)
		}
		out[it.ID] = rs
	}
	return out, nil
}

func count(s *string) (*int64, error) {
	if s == nil {
		return nil, nil
	}
	n, err := strconv.ParseInt(*s, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%q is not a count", *s)
	}
	return &n, nil
}

// toVideo converts one API item. Missing optional parts leave zero values;
// a missing id or snippet is a malformed reply.
func toVideo(v *youtube.Video, stats map[string]rawStats) (store.Video, error) {
	if v == nil || v.Id == "" {
		return store.Video{}, fmt.Errorf("item without an id")
	}
	if v.Snippet == nil {
		return store.Video{}, fmt.Errorf("video %s: no snippet", v.Id)
	}
	out := store.Video{
		ID:              v.Id,
		Title:           v.Snippet.Title,
		Description:     v.Snippet.Description,
		ChannelID:       v.Snippet.ChannelId,
		ChannelTitle:    v.Snippet.ChannelTitle,
		Tags:            v.Snippet.Tags,
		CategoryID:      v.Snippet.CategoryId,
		DefaultLanguage: v.Snippet.DefaultLanguage,
		ThumbnailURL:    bestThumbnail(v.Snippet.Thumbnails),
	}
	if out.DefaultLanguage == "" {
		out.DefaultLanguage = v.Snippet.DefaultAudioLanguage
	}
	if v.Snippet.PublishedAt != "" {
		t, err := time.Parse(time.RFC3339, v.Snippet.PublishedAt)
		if err != nil {
			return store.Video{}, fmt.Errorf("video %s publishedAt %q: %w", v.Id, v.Snippet.PublishedAt, err)
		}
		out.PublishedAt = t.UTC()
	}
	if v.ContentDetails != nil && v.ContentDetails.Duration != "" {
		d, err := ParseISODuration(v.ContentDetails.Duration)
		if err != nil {
			return store.Video{}, fmt.Errorf("video %s duration: %w", v.Id, err)
		}
		out.Duration = d
	}
	if rs, ok := stats[v.Id]; ok {
		out.Views, out.Likes, out.Comments = rs.views, rs.likes, rs.comments
	}
	return out, nil
}

func bestThumbnail(t *youtube.ThumbnailDetails) string {
	if t == nil {
		return ""
	}
	for _, th := range []*youtube.Thumbnail{t.High, t.Medium, t.Standard, t.Maxres, t.Default} {
		if th != nil && th.Url != "" {
			return th.Url
		}
	}
	return ""
}

// ParseISODuration parses the ISO 8601 durations the API uses for videos:
// PT2M55S, PT1H, P1DT2H, P0D. Years and months are refused (never sent for
// videos, and of no fixed length).
func ParseISODuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not an ISO 8601 duration", s)
	if !strings.HasPrefix(s, "P") || len(s) < 2 {
		return 0, bad
	}
	var total time.Duration
	inTime := false
	num := ""
	seen := false
	for _, r := range s[1:] {
		switch {
		case r >= '0' && r <= '9':
			num += string(r)
			continue
		case r == 'T':
			if inTime || num != "" {
				return 0, bad
			}
			inTime = true
			continue
		}
		if num == "" {
			return 0, bad
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > 1<<31 {
			return 0, bad
		}
		num = ""
		seen = true
		var unit time.Duration
		switch {
		case r == 'W' && !inTime:
			unit = 7 * 24 * time.Hour
		case r == 'D' && !inTime:
			unit = 24 * time.Hour
		case r == 'H' && inTime:
			unit = time.Hour
		case r == 'M' && inTime:
			unit = time.Minute
		case r == 'S' && inTime:
			unit = time.Second
		default:
			return 0, bad
		}
		total += time.Duration(n) * unit
	}
	if num != "" || !seen {
		return 0, bad
	}
	return total, nil
}
