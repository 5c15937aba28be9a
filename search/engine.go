package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/ytrend/ytrend/regions"
)

// CategoryNames reads, inside a search's read transaction, what names the
// category ids of a page of hits (videos, by their row ids) in given
// regions ("" if none is cached). The store provides it: the category
// cache is its table. query runs a statement in the search's transaction,
// prepared once for the engine's pool (a search runs it once).
type CategoryNames func(query func(sql string, args ...any) (*sql.Rows, error), videos []int64) (func(id string, in ...regions.Code) string, error)

// Engine searches one archive through its pool of read connections.
//
// A search prepares a statement when it first runs it, on its transaction's
// connection: it runs only a few of the statements its shape may need
// (which ones depends on what the probes find), and preparing one costs
// about as much as running it. The engine then keeps the statements a search
// used, prepared on the pool, until Close, and later searches reuse them
// (unless ShortLived).
type Engine struct {
	reader *sql.DB
	names  CategoryNames
	o      options

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // by query, prepared on the pool; nil once closed
}

// Option changes how an Engine searches.
type Option func(*options)

type options struct {
	probe      *WalkProbe
	shortLived bool
}

// WalkProbe watches and steers the block walk (search_walk.go). It is for
// tests and benchmarks: they count the blocks each walk ranks, and fix the
// group size to cover every path of the walk. Its fields may be changed
// between searches, not during one.
type WalkProbe struct {
	// Walked, if set, learns after each walk how many blocks it ranked and
	// how many it read.
	Walked func(ranked, read int)
	// Tested, if set, learns after each walk how many matches ytrend_pass
	// tested on their bounds and how many of those it dropped (cuts.go).
	Tested func(tested, dropped int)
	// ByIndex, if set, learns after each read of the views index (views
	// order) whether it tested regions and whether it found the page.
	ByIndex func(regions, found bool)
	// Group, if positive, fixes how many blocks every group ranks.
	Group int
	// InTx, if set, runs in each search's read transaction before its
	// first statement, while the search holds its pooled connection: a
	// test makes searches last as long as it likes with it.
	InTx func(q Query)
}

// WithWalkProbe makes every walk report to p and follow its Group.
func WithWalkProbe(p *WalkProbe) Option { return func(o *options) { o.probe = p } }

// ShortLived is for a process that searches once and exits (ytrend search):
// a search's statements are prepared in its transaction only, and not kept
// on the pool for searches that will not come (keeping one prepares it a
// second time).
func ShortLived() Option { return func(o *options) { o.shortLived = true } }

// New returns an engine over reader, a pool of read-only connections to an
// archive migrated to the current schema.
func New(reader *sql.DB, names CategoryNames, opts ...Option) *Engine {
	e := &Engine{reader: reader, names: names, stmts: map[string]*sql.Stmt{}}
	for _, opt := range opts {
		opt(&e.o)
	}
	return e
}

// Close closes the prepared statements (not the pool).
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	for _, st := range e.stmts {
		errs = append(errs, st.Close())
	}
	e.stmts = nil
	return errors.Join(errs...)
}

// Search finds videos matching q. No match is an empty, non-nil slice. Text
// of any kind is safe: it never produces an SQL error (in Raw mode a syntax
// error is ErrBadQuery).
func (e *Engine) Search(ctx context.Context, q Query) ([]Hit, error) {
	q, err := normalizeQuery(q)
	if err != nil {
		return nil, err
	}
	pq := parseQuery(q.Text, q.Raw)
	if pq.expr == "" {
		return []Hit{}, nil
	}
	st := e.statements(q, pq)
	// One read transaction: every step sees the same snapshot.
	tx, err := e.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	defer tx.Rollback()
	if p := e.o.probe; p != nil && p.InTx != nil {
		if _, err := tx.ExecContext(ctx, `SELECT 1`); err != nil { // the connection is taken at the first statement
			return nil, fmt.Errorf("store: search: %w", err)
		}
		p.InTx(q)
	}
	s := e.searcher(ctx, tx, st, q, pq)
	hits, err := s.run()
	// The transaction's end closes the statements prepared in it, and gives
	// its connection back before keep takes one (the pool may have no other).
	tx.Rollback()
	if err == nil {
		e.keep(ctx, s.used)
	}
	return hits, err
}

func (e *Engine) searcher(ctx context.Context, tx *sql.Tx, st *searchStatements, q Query, pq parsedQuery) searcher {
	return searcher{ctx: ctx, tx: tx, st: st, q: q, pq: pq, e: e, used: map[string]*sql.Stmt{}}
}

// stmtIn returns query's statement in tx: the engine's, if a search before
// kept it, else prepared in tx. Preparing on the pool instead would take a
// second connection while tx holds one, and wait for it when tx holds the
// pool's last.
func (e *Engine) stmtIn(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	e.mu.Lock()
	if e.stmts == nil {
		e.mu.Unlock()
		return nil, errClosed
	}
	kept, ok := e.stmts[query]
	e.mu.Unlock()
	if ok {
		return tx.StmtContext(ctx, kept), nil
	}
	return tx.PrepareContext(ctx, query)
}

// keep prepares on the pool the statements a search used that the engine
// does not hold yet, for the searches after it. Call it outside any
// transaction of the pool. A statement that fails to prepare is left to the
// next search to prepare in its own transaction.
func (e *Engine) keep(ctx context.Context, used map[string]*sql.Stmt) {
	if e.o.shortLived {
		return
	}
	for query := range used {
		e.mu.Lock()
		_, ok := e.stmts[query]
		closed := e.stmts == nil
		e.mu.Unlock()
		if ok || closed {
			continue
		}
		st, err := e.reader.PrepareContext(ctx, query)
		if err != nil {
			continue
		}
		e.mu.Lock()
		if _, ok := e.stmts[query]; ok || e.stmts == nil { // another search kept it first, or Close
			st.Close()
		} else {
			e.stmts[query] = st
		}
		e.mu.Unlock()
	}
}

var errClosed = errors.New("store: database is closed")
