package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/api/youtube/v3"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// categoryArchive is the part of *store.DB that caches category names. A
// fetch into an archive without it names no categories and spends nothing
// on them.
type categoryArchive interface {
	CategoriesFetchedAt(ctx context.Context, region regions.Code) (time.Time, error)
	SaveCategories(ctx context.Context, region regions.Code, at time.Time, cats []store.Category) error
}

// categories refreshes the region's category names from videoCategories.list
// when the archive has none from the current quota day (Pacific: the day
// Google's quota resets at, per Options.NextReset). It reserves its unit
// through the budget like every call; a budget whose cost table does not
// price videoCategories.list is the operator's choice to spend nothing on
// names, and is logged at debug level only. Failing to get the names never
// stops the chart: the names are then missing or a day old, and the run goes
// on; only a fence, a stop or a cancelled context end it here.
func (r *run) categories(ctx context.Context) error {
	ca, ok := r.f.archive.(categoryArchive)
	if !ok {
		return nil
	}
	// Two fetches of one region started together ask once.
	mu, _ := r.f.categoryLocks.LoadOrStore(r.job.Code, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	now := r.f.opt.Now()
	last, err := ca.CategoriesFetchedAt(ctx, r.job.Code)
	if err != nil {
		r.log.Warn("cannot read the cached category names; fetching the chart without refreshing them", "err", err)
		return nil
	}
	if !last.IsZero() && r.f.opt.NextReset(last).Equal(r.f.opt.NextReset(now)) {
		return nil // asked already this quota day
	}
	if err := r.halt(); err != nil {
		return err
	}
	var resp *youtube.VideoCategoryListResponse
	err = r.do(ctx, "videoCategories.list", func(ctx context.Context) error {
		var err error
		resp, err = r.f.svc.VideoCategories.List([]string{"snippet"}).RegionCode(r.job.Code.String()).Context(ctx).Do()
		return err
	})
	if err != nil {
		if errors.Is(err, quota.ErrFenced) || ctx.Err() != nil {
			return fmt.Errorf("category names: %w", err)
		}
		r.rep.CategoriesErr = err
		if errors.Is(err, quota.ErrUnknownCall) {
			// A cost table without videoCategories.list: the operator chose
			// not to spend on names.
			r.log.Debug("category names not fetched: the budget prices no videoCategories.list", "err", err)
			return nil
		}
		r.log.Warn("category names not refreshed; the chart is fetched without them", "err", err)
		return nil
	}
	cats := make([]store.Category, 0, len(resp.Items))
	for _, it := range resp.Items {
		if it == nil || it.Id == "" || it.Snippet == nil || it.Snippet.Title == "" {
			continue
		}
		assignable := it.Snippet.Assignable
		cats = append(cats, store.Category{ID: it.Id, Title: it.Snippet.Title, Assignable: &assignable})
	}
	if len(cats) == 0 {
		// An empty answer would wipe the names the archive has.
		r.rep.CategoriesErr = errors.New("videoCategories.list answered no categories")
		r.log.Warn("videoCategories.list answered no categories; keeping the cached names")
		return nil
	}
	if err := ca.SaveCategories(ctx, r.job.Code, now.UTC(), cats); err != nil {
		r.rep.CategoriesErr = err
		r.log.Warn("could not store the category names", "err", err)
		return nil
	}
	r.rep.Categories = len(cats)
	r.log.Debug("category names refreshed", "categories", len(cats), "units", r.rep.Units)
	return nil
}
