package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/ytrend/ytrend/regions"
)

// CategoryNames reads, inside a search's read transaction, what names a
// category id in the given regions ("" if none is cached). The store
// provides it: the category cache is its table.
type CategoryNames func(ctx context.Context, tx *sql.Tx) (func(id string, in ...regions.Code) string, error)

// Engine searches one archive through its pool of read connections. It
// prepares each statement shape once and keeps it until Close.
type Engine struct {
	reader *sql.DB
	names  CategoryNames
	o      options

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // nil once closed
}

// Option changes how an Engine searches.
type Option func(*options)

type options struct {
	probe *WalkProbe
}

// WalkProbe watches and steers the block walk (search_walk.go). It is for
// tests and benchmarks: they count the blocks each walk ranks, and fix the
// group size to cover every path of the walk. Its fields may be changed
// between searches, not during one.
type WalkProbe struct {
	// Walked, if set, learns after each walk how many blocks it ranked and
	// how many it read.
	Walked func(ranked, read int)
	// Group, if positive, fixes how many blocks every group ranks.
	Group int
	// InTx, if set, runs in each search's read transaction before its
	// first statement, while the search holds its pooled connection: a
	// test makes searches last as long as it likes with it.
	InTx func(q Query)
}

// WithWalkProbe makes every walk report to p and follow its Group.
func WithWalkProbe(p *WalkProbe) Option { return func(o *options) { o.probe = p } }

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
	// Statements first: preparing takes a pooled connection, which must not
	// happen while the transaction holds one.
	st, err := e.statements(ctx, q, pq)
	if err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
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
	s := searcher{ctx: ctx, tx: tx, st: st, q: q, pq: pq, e: e}
	return s.run()
}

// prepared returns the statement for query, prepared once. Call it before
// beginning the read transaction that uses it: preparing takes a connection
// from the pool.
func (e *Engine) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stmts == nil {
		return nil, errClosed
	}
	if st, ok := e.stmts[query]; ok {
		return st, nil
	}
	st, err := e.reader.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	e.stmts[query] = st
	return st, nil
}

var errClosed = errors.New("store: database is closed")
