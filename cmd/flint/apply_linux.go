package main

import (
	"os"
	"syscall"
)

// sameDevice says whether a and b are on one filesystem.
func sameDevice(a, b os.FileInfo) bool {
	x, ok1 := a.Sys().(*syscall.Stat_t)
	y, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && x.Dev == y.Dev
}
