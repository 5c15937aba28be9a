//go:build race

package store_test

// raceDetector: the race detector slows SQLite (pure Go) about tenfold, so
// the walk's equality tests run without it (make test's '^TestWalk' step)
// and the randomized ones run fewer cases under it.
const raceDetector = true
