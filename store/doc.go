// Package store is ytrend's local archive: a SQLite file (pure-Go
// modernc.org/sqlite) holding every fetched video, where and when it trended,
// the history of fetch runs, and an FTS5 index that answers searches at zero
// API quota.
//
// Key decision: one writer connection and a pool of readers over a WAL file,
// with busy_timeout and IMMEDIATE transactions, so the scheduler, ad-hoc
// fetches and searches in other processes share the file without SQLITE_BUSY
// reaching the user.
package store
