//go:build !race

package search_test

const raceDetector = false
