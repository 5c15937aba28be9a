//go:build race

package search_test

// raceDetector: the race detector slows SQLite (pure Go) about tenfold, so
// the randomized tests run fewer cases under it.
const raceDetector = true
