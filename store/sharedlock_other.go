//go:build !linux

package store

import (
	"io/fs"
	"os"
)

// ofdLocks: there are no OFD locks here, so holdShared holds nothing, and
// a process that embeds Litestream keeps the risk sharedlock.go describes.
const ofdLocks = false

type fileID struct{}

func idOf(fs.FileInfo) fileID { return fileID{} }

func lockShared(*os.File) error { return nil }
