//go:build !linux

package main

import "errors"

// rereadPartitionTable needs Linux's BLKRRPART.
func rereadPartitionTable(string) error { return errors.ErrUnsupported }
