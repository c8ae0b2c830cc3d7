package sys

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Disk is a whole disk opened to rewrite its partition table and tell the
// kernel about the change partition by partition, with the BLKPG ioctl
// (linux/blkpg.h), as partx(8) and parted do. It holds an exclusive BSD
// lock on the disk while open, so that udev neither probes it half
// written nor re-reads its table under flint (systemd's "Locking Block
// Device Access", https://systemd.io/BLOCK_DEVICE_LOCKING/). The lock is
// taken on a read-only descriptor of its own, so that the writable one
// can be closed while the disk stays locked (CloseWriter), as
// systemd-repart holds its lock apart from the descriptor it writes.
type Disk struct {
	f    *os.File
	lock *os.File // nil for DiskFromFile's
	path string
}

// OpenDisk opens the whole disk at path for reading and writing, and
// locks it. A disk someone else holds locked is waited for.
func OpenDisk(path string) (*Disk, error) {
	lock, err := os.OpenFile(path, os.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening disk %s: %w", path, err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		lock.Close()
		return nil, fmt.Errorf("locking disk %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("opening disk %s: %w", path, err)
	}
	return &Disk{f: f, lock: lock, path: path}, nil
}

// DiskFromFile is the Disk of a whole disk the caller opened itself (flint
// install holds its destination open with O_EXCL), without the lock
// OpenDisk takes. Close closes f.
func DiskFromFile(f *os.File) *Disk { return &Disk{f: f, path: f.Name()} }

// ReadAt reads from the disk.
func (d *Disk) ReadAt(b []byte, off int64) (int, error) { return d.f.ReadAt(b, off) }

// WriteAt writes to the disk.
func (d *Disk) WriteAt(b []byte, off int64) (int, error) { return d.f.WriteAt(b, off) }

// Sync flushes what was written to the device.
func (d *Disk) Sync() error {
	if err := d.f.Sync(); err != nil {
		return fmt.Errorf("syncing disk %s: %w", d.path, err)
	}
	return nil
}

// CloseWriter closes the writable descriptor and keeps the disk locked:
// udev's watch sees the close (IN_CLOSE_WRITE) while the disk is locked,
// so systemd-udevd cannot take the lock to re-read the partition table
// (BLKRRPART, which would remove and re-add every partition) and
// synthesizes "change" events for the disk and its partitions instead
// (systemd src/udev/udevd.c, synthesize_change). Nothing but Close may
// follow.
func (d *Disk) CloseWriter() error {
	if d.f == nil {
		return nil
	}
	err := d.f.Close()
	d.f = nil
	if err != nil {
		return fmt.Errorf("closing disk %s: %w", d.path, err)
	}
	return nil
}

// Close closes the disk and unlocks it.
func (d *Disk) Close() error {
	err := d.CloseWriter()
	if d.lock != nil {
		if lerr := d.lock.Close(); lerr != nil && err == nil {
			err = fmt.Errorf("closing disk %s: %w", d.path, lerr)
		}
		d.lock = nil
	}
	return err
}

// AddPartition tells the kernel that partition number spans length bytes
// from byte start. It fails with EBUSY when the number is taken or the
// extent overlaps a partition the kernel knows.
func (d *Disk) AddPartition(number int, start, length int64) error {
	return d.blkpg(unix.BLKPG_ADD_PARTITION, "adding", number, start, length)
}

// DeletePartition tells the kernel that partition number is gone. It
// fails with EBUSY when the partition is open (mounted, held by an array,
// an open LUKS volume, a swap area): the kernel refuses, and so does
// flint, as partx does.
func (d *Disk) DeletePartition(number int) error {
	return d.blkpg(unix.BLKPG_DEL_PARTITION, "removing", number, 0, 0)
}

// ResizePartition tells the kernel the new length of partition number,
// which keeps its start.
func (d *Disk) ResizePartition(number int, start, length int64) error {
	return d.blkpg(unix.BLKPG_RESIZE_PARTITION, "resizing", number, start, length)
}

// RereadPartitionTable asks the kernel to read the whole table again
// (BLKRRPART). It fails with EBUSY while a partition of the disk is in
// use, and sometimes for a moment right after a write: the caller decides
// whether to try again.
func (d *Disk) RereadPartitionTable() error {
	for {
		err := unix.IoctlSetInt(int(d.f.Fd()), unix.BLKRRPART, 0)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		default:
			return fmt.Errorf("rereading the partition table of %s (BLKRRPART): %w", d.path, err)
		}
	}
}

func (d *Disk) blkpg(op int32, verb string, number int, start, length int64) error {
	p := unix.BlkpgPartition{Start: start, Length: length, Pno: int32(number)}
	arg := unix.BlkpgIoctlArg{Op: op, Datalen: int32(unsafe.Sizeof(p)), Data: (*byte)(unsafe.Pointer(&p))}
	for {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, d.f.Fd(), unix.BLKPG, uintptr(unsafe.Pointer(&arg)))
		switch {
		case errno == 0:
			return nil
		case errors.Is(errno, syscall.EINTR):
			continue
		default:
			return fmt.Errorf("%s partition %d of %s in the kernel (BLKPG): %w", verb, number, d.path, errno)
		}
	}
}
