//go:build !linux

package store

import (
	"io/fs"
	"os"
)

// fileID names a file whatever the path it was opened by.
type fileID struct{ name string }

func idOf(fi fs.FileInfo) fileID { return fileID{fi.Name()} }

// lockShared does nothing where there are no OFD locks: there, a process
// that embeds Litestream keeps the risk sharedlock.go describes.
func lockShared(*os.File) error { return nil }
