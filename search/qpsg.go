package search

import (
	"reflect"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Every connection runs with SQLite's query planner stability guarantee
// (SQLITE_DBCONFIG_ENABLE_QPSG): a statement keeps the plan it was prepared
// with instead of being prepared again when a bound value changes.
//
// Why: since SQLite 3.54 a statement with a "col = ?" term in an ORDER BY
// query is re-prepared whenever that parameter is rebound from 0 or 1 to
// another value or back. FTS5 finds each term of a MATCH in each index
// segment with such a statement (SELECT pgno FROM '%_idx' WHERE segid=? AND
// term<=? ORDER BY term DESC LIMIT 1), so every range query of a walk
// re-prepared it twice per term whenever segment 1 exists: at 1M, 1,999 of
// 9,000 lookups over 24 searches (sqlite3_stmt_status REPREPARE). A changed
// LIMIT ?N re-prepares too (the block and doc-frequency statements). The
// plans that depend on bound values (LIKE prefixes, STAT4 samples, a vtab's
// constant LIMIT) are not ones this codebase uses, and no plan changes an
// answer.
//
// The driver has no option for it, so the hook reaches the connection's
// handle through its unexported fields; if they are not there (a driver
// upgrade), connections open as before.
func init() {
	sqlite.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
		enableQPSG(c)
		return nil
	})
}

func enableQPSG(c any) {
	h, t, ok := connHandle(c)
	if !ok {
		return
	}
	va := libc.Xmalloc(t, 16) // sqlite3_db_config(db, op, int on, int *res)
	if va == 0 {
		return
	}
	defer libc.Xfree(t, va)
	sqlite3.Xsqlite3_db_config(t, h, sqlite3.SQLITE_DBCONFIG_ENABLE_QPSG, libc.VaList(va, int32(1), uintptr(0)))
}

// connHandle returns the sqlite3* handle and the TLS of a driver connection
// (modernc.org/sqlite's conn), false if it has no such fields.
func connHandle(c any) (uintptr, *libc.TLS, bool) {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return 0, nil, false
	}
	db, tls := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
	if !db.IsValid() || db.Kind() != reflect.Uintptr || !tls.IsValid() || tls.Type() != reflect.TypeFor[*libc.TLS]() {
		return 0, nil, false
	}
	h := *(*uintptr)(unsafe.Pointer(db.UnsafeAddr()))
	t := *(**libc.TLS)(unsafe.Pointer(tls.UnsafeAddr()))
	return h, t, h != 0 && t != nil
}
