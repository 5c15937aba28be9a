package sim

import (
	"cmp"
	"log/slog"
	"slices"

	"github.com/ytrend/ytrend/regions"
)

type i18nRegionListJSON struct {
	Kind  string           `json:"kind"`
	Etag  string           `json:"etag"`
	Items []i18nRegionJSON `json:"items"`
}

func (r *i18nRegionListJSON) etag() string { return r.Etag }

type i18nRegionJSON struct {
	Kind    string                 `json:"kind"`
	Etag    string                 `json:"etag"`
	ID      string                 `json:"id"`
	Snippet *i18nRegionSnippetJSON `json:"snippet,omitempty"`
}

type i18nRegionSnippetJSON struct {
	Gl   string `json:"gl"`
	Name string `json:"name"`
}

// i18nRegionsList answers the regions list, sorted by name as the real API
// sorts it. Names are English whatever hl asks for.
func (s *Server) i18nRegionsList(req *apiRequest) (response, *apiError) {
	parts, err := parseParts(req.q, []string{"id", "snippet"})
	if err != nil {
		return nil, err
	}
	all := regions.All()
	slices.SortFunc(all, func(a, b regions.Code) int { return cmp.Compare(a.Name(), b.Name()) })
	resp := &i18nRegionListJSON{Kind: "youtube#i18nRegionListResponse", Items: make([]i18nRegionJSON, 0, len(all))}
	etags := make([]string, 0, len(all))
	for _, c := range all {
		item := i18nRegionJSON{Kind: "youtube#i18nRegion", Etag: etagOf("i18nRegion", string(c), c.Name()), ID: string(c)}
		if parts["snippet"] {
			item.Snippet = &i18nRegionSnippetJSON{Gl: string(c), Name: c.Name()}
		}
		etags = append(etags, item.Etag)
		resp.Items = append(resp.Items, item)
	}
	resp.Etag = etagOf(etags...)
	req.log = append(req.log, slog.String("hl", req.q.Get("hl")), slog.Int("items", len(resp.Items)))
	return resp, nil
}
