package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// rereadPartitionTable asks the kernel to reread dev's partition table
// (BLKRRPART), once.
func rereadPartitionTable(dev string) error {
	f, err := os.Open(dev)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.IoctlSetInt(int(f.Fd()), unix.BLKRRPART, 0)
}
