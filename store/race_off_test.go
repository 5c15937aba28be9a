//go:build !race

package store_test

const raceDetector = false
