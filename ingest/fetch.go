package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/api/youtube/v3"

	"github.com/ytrend/ytrend/internal/secret"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// budget is the part of *quota.Limiter a fetch spends from.
type budget interface {
	Reserve(ctx context.Context, call string, opts ...quota.ReserveOption) (quota.Result, error)
	Release(ctx context.Context, id string) error
	MarkExhausted(ctx context.Context, until time.Time, reason string, calls ...string) error
}

// archive is the part of *store.DB a fetch writes to.
type archive interface {
	StartRun(ctx context.Context, region regions.Code, trigger store.Trigger, at time.Time) (int64, error)
	SavePage(ctx context.Context, p store.Page) (store.PageResult, error)
	FinishRun(ctx context.Context, id int64, end store.RunEnd) error
}

// Options configures a Fetcher.
type Options struct {
	Endpoint   string        // server root; "" = Google
	APIKey     secret.Value  // required; it never formats, and is redacted from every error
	Timeout    time.Duration // per request; default 15s
	Retries    int           // extra attempts on transient failures; default 0 (set it)
	Backoff    time.Duration // first retry delay, doubled per attempt, jittered; default 1s
	MaxBackoff time.Duration // cap on one delay; default 30s
	Logger     *slog.Logger
	Now        func() time.Time
	// NextReset is when Google's daily quota resets after a given instant:
	// an upstream quotaExceeded marks the credential exhausted until then.
	// Default quota.NextReset (midnight America/Los_Angeles).
	NextReset func(time.Time) time.Time
	// Observe, if set, is called with every finished run's report.
	Observe func(Report)
}

// Fetcher runs region fetches. It is safe for concurrent use by several
// regions at once.
type Fetcher struct {
	svc     *youtube.Service
	budget  budget
	archive archive
	opt     Options
	log     *slog.Logger
	// categoryLocks serialises the category step per region
	// (regions.Code -> *sync.Mutex).
	categoryLocks sync.Map
}

// New builds a Fetcher that reserves from b and stores into a.
func New(ctx context.Context, b budget, a archive, opt Options) (*Fetcher, error) {
	if opt.Timeout <= 0 {
		opt.Timeout = 15 * time.Second
	}
	if opt.Backoff <= 0 {
		opt.Backoff = time.Second
	}
	if opt.MaxBackoff < opt.Backoff {
		opt.MaxBackoff = max(30*time.Second, opt.Backoff)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.NextReset == nil {
		opt.NextReset = quota.NextReset
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	svc, err := newService(ctx, opt.Endpoint, opt.APIKey)
	if err != nil {
		return nil, err
	}
	return &Fetcher{svc: svc, budget: b, archive: a, opt: opt, log: opt.Logger}, nil
}

var errStopped = errors.New("stopped by shutdown")

// quotaStop ends a run as stopped_quota.
type quotaStop struct {
	limit   string
	retryAt time.Time
	why     string
}

func (q *quotaStop) Error() string {
	return fmt.Sprintf("quota: refused by %s until %s (%s)", q.limit, q.retryAt.UTC().Format(time.RFC3339), q.why)
}

// Fetch runs one region fetch to the end and records it as a run. It never
// sleeps for a quota Retry-After: a refusal ends the run.
func (f *Fetcher) Fetch(ctx context.Context, job Job) Report {
	r := &run{f: f, job: job, rep: Report{Region: job.Code, Trigger: job.Trigger, Started: f.opt.Now().UTC()}}
	if job.Pages <= 0 {
		job.Pages = 4
		r.job.Pages = 4
	}
	id, err := f.archive.StartRun(ctx, job.Code, job.Trigger, r.rep.Started)
	if err != nil {
		r.rep.Status = store.StatusFailed
		r.rep.Err = fmt.Errorf("start run: %w", err)
		r.rep.Finished = f.opt.Now().UTC()
		f.logRun(r.rep)
		return r.rep
	}
	r.rep.RunID = id
	r.log = f.log.With("region", job.Code.String(), "run", id)

	err = r.categories(ctx)
	if err == nil {
		err = r.chart(ctx)
	}
	if err == nil {
		err = r.searches(ctx)
	}
	return r.finish(ctx, err)
}

type run struct {
	f         *Fetcher
	job       Job
	rep       Report
	log       *slog.Logger
	remaining int64
	failOpen  bool // the last reservation was a fail-open grant: remaining is unknown
	rank      int  // rank of the next chart video
}

// halt says why the run must not send another request, if it must not: a
// shutdown began, or the leader's term it acts for ended.
func (r *run) halt() error {
	if err := r.fenced(); err != nil {
		return err
	}
	select {
	case <-r.job.Stop:
		return errStopped
	default:
		return nil
	}
}

// fenced is the run's end when the leader's term it acts for ended.
func (r *run) fenced() error {
	if r.job.Term == nil {
		return nil
	}
	select {
	case <-r.job.Term.Done():
		return fmt.Errorf("%w: %w", quota.ErrFenced, r.job.Term.Err())
	default:
		return nil
	}
}

func (r *run) chart(ctx context.Context) error {
	token := ""
	r.rank = 1
	for page := 1; page <= r.job.Pages; page++ {
		if err := r.halt(); err != nil {
			return err
		}
		var resp *youtube.VideoListResponse
		var body []byte
		err := r.do(ctx, "videos.list", func(ctx context.Context) error {
			call := r.f.svc.Videos.List([]string{"snippet", "contentDetails", "statistics"}).
				Chart("mostPopular").RegionCode(r.job.Code.String()).MaxResults(50)
			if r.job.Category != "" {
				call = call.VideoCategoryId(r.job.Category)
			}
			if token != "" {
				call = call.PageToken(token)
			}
			cctx, capt := withCapture(ctx)
			var err error
			resp, err = call.Context(cctx).Do()
			body = capt.bytes()
			return err
		})
		if err != nil {
			return fmt.Errorf("chart page %d: %w", page, err)
		}
		videos, err := convertList(resp.Items, body)
		if err != nil {
			return fmt.Errorf("chart page %d: malformed response: %w", page, err)
		}
		if err := r.save(ctx, store.PageChart, page, videos); err != nil {
			return fmt.Errorf("chart page %d: %w", page, err)
		}
		token = resp.NextPageToken
		if token == "" {
			break
		}
	}
	return nil
}

func (r *run) searches(ctx context.Context) error {
	for i, s := range r.job.Searches {
		token := ""
		pages := max(s.Pages, 1)
		for page := 1; page <= pages; page++ {
			if err := r.halt(); err != nil {
				return err
			}
			var sr *youtube.SearchListResponse
			err := r.do(ctx, "search.list", func(ctx context.Context) error {
				call := r.f.svc.Search.List([]string{"snippet"}).Q(s.Q).Type("video").
					RegionCode(r.job.Code.String()).MaxResults(50)
				if s.Order != "" {
					call = call.Order(s.Order)
				}
				if s.PublishedWithin > 0 {
					call = call.PublishedAfter(r.f.opt.Now().Add(-s.PublishedWithin.D()).UTC().Format(time.RFC3339))
				}
				if token != "" {
					call = call.PageToken(token)
				}
				var err error
				sr, err = call.Context(ctx).Do()
				return err
			})
			if err != nil {
				return fmt.Errorf("search %d %q page %d: %w", i+1, s.Q, page, err)
			}
			ids := searchIDs(sr)
			if len(ids) > 0 {
				// The search results carry no statistics: one videos.list
				// per 50 ids (this page holds at most 50) brings them.
				var vr *youtube.VideoListResponse
				var body []byte
				err := r.do(ctx, "videos.list", func(ctx context.Context) error {
					cctx, capt := withCapture(ctx)
					var err error
					vr, err = r.f.svc.Videos.List([]string{"snippet", "contentDetails", "statistics"}).
						Id(ids...).Context(cctx).Do()
					body = capt.bytes()
					return err
				})
				if err != nil {
					return fmt.Errorf("search %d %q page %d statistics: %w", i+1, s.Q, page, err)
				}
				videos, err := convertList(vr.Items, body)
				if err != nil {
					return fmt.Errorf("search %d %q page %d: malformed response: %w", i+1, s.Q, page, err)
				}
				if err := r.save(ctx, store.PageSearch, page, videos); err != nil {
					return fmt.Errorf("search %d %q page %d: %w", i+1, s.Q, page, err)
				}
			}
			token = sr.NextPageToken
			if token == "" {
				break
			}
		}
	}
	return nil
}

func searchIDs(sr *youtube.SearchListResponse) []string {
	seen := map[string]bool{}
	var ids []string
	for _, it := range sr.Items {
		if it == nil || it.Id == nil || it.Id.VideoId == "" || seen[it.Id.VideoId] {
			continue
		}
		seen[it.Id.VideoId] = true
		ids = append(ids, it.Id.VideoId)
	}
	if len(ids) > 50 {
		ids = ids[:50]
	}
	return ids
}

func convertList(items []*youtube.Video, body []byte) ([]store.Video, error) {
	stats, err := parseRawStats(body)
	if err != nil {
		return nil, err
	}
	out := make([]store.Video, 0, len(items))
	for _, it := range items {
		v, err := toVideo(it, stats)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// save stores one page in one transaction and reports progress.
func (r *run) save(ctx context.Context, kind store.PageKind, page int, videos []store.Video) error {
	// A page that arrived is stored even if shutdown began meanwhile; only a
	// hard cancel abandons it.
	p := store.Page{
		RunID: r.rep.RunID, Region: r.job.Code, FetchedAt: r.f.opt.Now().UTC(),
		Kind: kind, Videos: videos, Units: r.rep.Units,
	}
	if kind == store.PageChart {
		p.FirstRank = r.rank
		r.rank += len(videos)
	}
	res, err := r.f.archive.SavePage(ctx, p)
	if err != nil {
		return fmt.Errorf("store page: %w", err)
	}
	r.rep.Pages++
	r.rep.Videos += len(videos)
	r.rep.New += res.New
	r.rep.Updated += res.Updated
	r.rep.Unchanged += res.Unchanged
	remaining := any(r.remaining)
	if r.failOpen || r.remaining < 0 {
		remaining = "unknown"
	}
	r.log.Debug("page stored", "kind", string(kind), "page", page, "videos", len(videos),
		"new", res.New, "updated", res.Updated, "units", r.rep.Units, "remaining", remaining)
	if r.job.Progress != nil {
		r.job.Progress(Progress{
			Region: r.job.Code, RunID: r.rep.RunID, Kind: kind, Page: page, Videos: len(videos),
			Units: r.rep.Units, Remaining: r.remaining, FailOpen: r.failOpen, New: res.New, Updated: res.Updated,
		})
	}
	return nil
}

// do reserves call's units, sends the request, and retries transient
// failures with jittered exponential backoff, reserving again for every
// attempt (Google charges failed requests too). For a leader's run, no
// attempt starts once its term has ended.
func (r *run) do(ctx context.Context, call string, send func(context.Context) error) error {
	var opts []quota.ReserveOption
	if t := r.job.Term; t != nil {
		opts = append(opts, quota.WithFence(t.Fence()), quota.WithLeading(t.Leading))
	}
	// The term's end cuts short a reservation waiting for the backend and a
	// retry's backoff, never a request already sent.
	wait, stopWaiting := r.untilTermEnds(ctx)
	defer stopWaiting()
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.fenced(); err != nil {
			return err
		}
		res, err := r.f.budget.Reserve(wait, call, opts...)
		if err != nil {
			var refused *quota.RefusedError
			if ferr := r.fenced(); ferr != nil {
				return ferr // the term ended while the budget was asked
			}
			if errors.Is(err, quota.ErrFenced) {
				return fmt.Errorf("reserve %s: %w", call, err)
			}
			if errors.As(err, &refused) {
				return &quotaStop{limit: refused.Limit, retryAt: refusalEnds(res, refused, r.f.opt.Now()), why: "budget refused " + call}
			}
			return fmt.Errorf("reserve %s: %w", call, err)
		}
		if !res.Duplicate {
			r.rep.Units += res.Cost
		}
		r.remaining, r.failOpen = res.Remaining(), res.FailOpen
		if res.FailOpen {
			r.log.Warn("quota backend unreachable; call allowed by failure policy and journaled", "call", call, "reservation", res.ID)
		}
		if err := r.fenced(); err != nil {
			// The term ended while the budget granted: nothing was sent.
			r.release(ctx, res)
			return err
		}

		var w wire
		rctx, cancel := context.WithTimeout(w.trace(ctx), r.f.opt.Timeout)
		err = send(rctx)
		cancel()
		if err == nil {
			return nil
		}
		err = r.f.opt.APIKey.RedactErr(err)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if w.neverLeft() {
			// No attempt got a connection, so the request never left this
			// host: Google charged nothing, so neither does the ledger. The
			// error is no guide here (see wire).
			r.release(ctx, res)
		}
		c := classify(err, call)
		switch c.kind {
		case kindExhausted:
			until := r.f.opt.NextReset(r.f.opt.Now())
			if merr := r.f.budget.MarkExhausted(ctx, until, c.reason, c.calls...); merr != nil {
				r.log.Error("could not record upstream quota exhaustion", "err", merr)
			}
			return &quotaStop{limit: "upstream", retryAt: until, why: "YouTube answered " + c.reason}
		case kindRetry:
			if attempt >= r.f.opt.Retries {
				return fmt.Errorf("%s failed after %d attempts (%s): %w", call, attempt+1, c.reason, err)
			}
			delay := r.f.backoff(attempt)
			r.log.Warn("transient API failure; retrying", "call", call, "reason", c.reason, "attempt", attempt+1, "delay", delay.Round(time.Millisecond))
			t := time.NewTimer(delay)
			select {
			case <-wait.Done():
				t.Stop()
				if err := r.fenced(); err != nil {
					return err
				}
				return ctx.Err()
			case <-t.C:
			}
		default:
			return fmt.Errorf("%s rejected (%s): %w", call, c.reason, err)
		}
	}
}

// untilTermEnds returns ctx, cancelled as well when the run's term ends.
func (r *run) untilTermEnds(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.job.Term == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-r.job.Term.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// release gives back the units of a reservation whose request was never
// sent.
func (r *run) release(ctx context.Context, res quota.Result) {
	if err := r.f.budget.Release(ctx, res.ID); err != nil {
		r.log.Warn("could not release the units of a request never sent", "reservation", res.ID, "err", err)
		return
	}
	if !res.Duplicate {
		r.rep.Units -= res.Cost
	}
}

// refusalEnds is the moment a refused reservation could fit.
func refusalEnds(res quota.Result, e *quota.RefusedError, now time.Time) time.Time {
	if !e.Until.IsZero() {
		return e.Until
	}
	at := res.At
	if at.IsZero() {
		at = now
	}
	return at.Add(e.RetryAfter)
}

// backoff is the delay before retry number attempt+1: doubling from Backoff,
// capped at MaxBackoff, with "equal jitter" (half fixed, half random) so
// regions that failed together do not retry together.
func (f *Fetcher) backoff(attempt int) time.Duration {
	d := f.opt.Backoff << min(attempt, 20)
	if d > f.opt.MaxBackoff || d <= 0 {
		d = f.opt.MaxBackoff
	}
	half := d / 2
	return half + rand.N(half+1)
}

func (r *run) finish(ctx context.Context, err error) Report {
	rep := &r.rep
	rep.Finished = r.f.opt.Now().UTC()
	end := store.RunEnd{At: rep.Finished, Units: rep.Units}
	var qs *quotaStop
	switch {
	case err == nil:
		rep.Status = store.StatusOK
	case errors.As(err, &qs):
		rep.Status = store.StatusStoppedQuota
		rep.RefusedBy, rep.RetryAt = qs.limit, qs.retryAt.UTC()
		end.RefusedBy, end.RetryAt = qs.limit, rep.RetryAt
		rep.Err = err
		end.Error = err.Error()
	case errors.Is(err, quota.ErrFenced):
		rep.Status = store.StatusFenced
		rep.Err = err
		end.Error = err.Error()
	case errors.Is(err, errStopped) || ctx.Err() != nil:
		// Shutdown, or the caller gave up (cancelled or its deadline passed).
		rep.Status = store.StatusInterrupted
		rep.Err = err
		end.Error = err.Error()
	default:
		rep.Status = store.StatusFailed
		rep.Err = err
		end.Error = err.Error()
	}
	end.Status = rep.Status
	// Record the end even when ctx is cancelled (shutdown): the run row must
	// not stay "running".
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if ferr := r.f.archive.FinishRun(fctx, rep.RunID, end); ferr != nil {
		r.log.Error("could not record run end", "err", ferr)
	}
	r.f.logRun(*rep)
	if r.f.opt.Observe != nil {
		r.f.opt.Observe(*rep)
	}
	return *rep
}

// logRun writes the one line per run operators read.
func (f *Fetcher) logRun(rep Report) {
	attrs := []any{
		"region", rep.Region.String(), "run", rep.RunID, "status", string(rep.Status),
		"trigger", string(rep.Trigger), "pages", rep.Pages, "videos", rep.Videos,
		"new", rep.New, "updated", rep.Updated, "units", rep.Units,
		"duration", rep.Duration().Round(time.Millisecond),
	}
	switch rep.Status {
	case store.StatusOK:
		f.log.Info("run finished", attrs...)
	case store.StatusFenced:
		attrs = append(attrs, "err", errString(rep.Err))
		f.log.Warn("run fenced: this replica lost the leader lease; another one leads", attrs...)
	case store.StatusStoppedQuota:
		attrs = append(attrs, "refused_by", rep.RefusedBy, "retry_at", rep.RetryAt.Format(time.RFC3339),
			"retry_after", time.Until(rep.RetryAt).Round(time.Second))
		f.log.Warn("run stopped by quota", attrs...)
	default:
		attrs = append(attrs, "err", errString(rep.Err))
		f.log.Error("run did not finish", attrs...)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
