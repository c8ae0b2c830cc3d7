//go:build !linux

package sys

import (
	"errors"
	"fmt"
	"os"
)

// Disk is a stand-in off Linux, where flint writes no partition tables.
type Disk struct{}

// OpenDisk always fails off Linux with errors.ErrUnsupported.
func OpenDisk(path string) (*Disk, error) {
	return nil, fmt.Errorf("opening disk %s: %w", path, errors.ErrUnsupported)
}

// DiskFromFile returns a Disk whose every method fails off Linux.
func DiskFromFile(f *os.File) *Disk { return &Disk{} }

// RereadPartitionTable always fails off Linux.
func (*Disk) RereadPartitionTable() error { return errors.ErrUnsupported }

// ReadAt is never reached: OpenDisk fails.
func (*Disk) ReadAt(b []byte, off int64) (int, error) { return 0, errors.ErrUnsupported }

// WriteAt is never reached: OpenDisk fails.
func (*Disk) WriteAt(b []byte, off int64) (int, error) { return 0, errors.ErrUnsupported }

// Sync is never reached: OpenDisk fails.
func (*Disk) Sync() error { return errors.ErrUnsupported }

// Close is never reached: OpenDisk fails.
func (*Disk) Close() error { return errors.ErrUnsupported }

// AddPartition is never reached: OpenDisk fails.
func (*Disk) AddPartition(number int, start, length int64) error { return errors.ErrUnsupported }

// DeletePartition is never reached: OpenDisk fails.
func (*Disk) DeletePartition(number int) error { return errors.ErrUnsupported }

// ResizePartition is never reached: OpenDisk fails.
func (*Disk) ResizePartition(number int, start, length int64) error { return errors.ErrUnsupported }

// CloseWriter is never reached: OpenDisk fails.
func (*Disk) CloseWriter() error { return errors.ErrUnsupported }
