package quota

import (
	"context"
	"database/sql"
	"slices"
	"sync"
)

// ledgerTx is the embedded ledger's transaction: a *sql.Tx whose statements
// come prepared from the backend's cache. Parsing a reservation's dozen
// statements anew each time was a third of its cost (issue 21's profile).
type ledgerTx struct {
	*sql.Tx
	stmts  *stmtCache
	pruned *pruneTimes
}

// pruneTimes is when this process last pruned each limit (see prune), by
// credential and limit name.
type pruneTimes struct {
	sync.Mutex
	at map[string]int64
}

func (tx ledgerTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := tx.stmts.get(query); s != nil {
		return tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return tx.Tx.ExecContext(ctx, query, args...)
}

func (tx ledgerTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := tx.stmts.get(query); s != nil {
		return tx.StmtContext(ctx, s).QueryContext(ctx, args...)
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

func (tx ledgerTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := tx.stmts.get(query); s != nil {
		return tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return tx.Tx.QueryRowContext(ctx, query, args...)
}

// stmtCache holds the ledger's statements, by their SQL, prepared on the
// archive's writer pool. A statement is prepared after the transaction
// that first ran it: while a transaction runs, the pool's one connection is
// its own. database/sql re-prepares a statement on a new connection by
// itself, and SQLite re-prepares one whose schema changed.
type stmtCache struct {
	mu      sync.Mutex
	stmts   map[string]*sql.Stmt
	missing []string
}

// get returns query's prepared statement, or nil and notes that it is
// wanted.
func (c *stmtCache) get(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stmts[query]
	if s == nil && !slices.Contains(c.missing, query) {
		c.missing = append(c.missing, query)
	}
	return s
}

// prepare prepares the statements transactions wanted; it must run outside
// any transaction on db. A statement that does not prepare (a damaged
// ledger) keeps running unprepared, and reports its own error there.
func (c *stmtCache) prepare(ctx context.Context, db *sql.DB) {
	c.mu.Lock()
	missing := c.missing
	c.missing = nil
	c.mu.Unlock()
	for _, query := range missing {
		s, err := db.PrepareContext(ctx, query)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if c.stmts[query] == nil {
			c.stmts[query], s = s, nil
		}
		c.mu.Unlock()
		if s != nil {
			s.Close()
		}
	}
}
