package disks

import (
	"errors"
	"fmt"
	"strings"
)

// ErrConflict means the config asks for something the disk cannot give
// without destroying data the config does not allow destroying, or that
// does not fit. The ConflictError lists every reason.
var ErrConflict = errors.New("the config conflicts with the disk")

// ConflictError lists every conflict found on one disk, not just the
// first, so one failed boot shows everything to fix.
type ConflictError struct {
	Device    string
	Conflicts []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("disk %s: %s: %s", e.Device, ErrConflict, strings.Join(e.Conflicts, "; "))
}

// Unwrap makes errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// ErrDeviceTimeout means a device the config names did not appear in time.
var ErrDeviceTimeout = errors.New("device did not appear")

// ErrNotSupported means the config asks for something flint does not do
// (IBM CEX secure keys); the stage refuses rather than skip it.
var ErrNotSupported = errors.New("not supported")

// ErrKernelView means the kernel's partitions differ from the table just
// written, even after telling it partition by partition: later steps
// would format the wrong extents.
var ErrKernelView = errors.New("the kernel's view of the partitions differs from the plan")

// ErrFilesystemMismatch means a device holds a filesystem the config does
// not describe and wipeFilesystem is false: the stage will not destroy it.
var ErrFilesystemMismatch = errors.New("is not of the correct type, label, or UUID")

// ErrLuksMismatch means a device holds something the config's LUKS volume
// cannot reuse (another signature, LUKS1, a LUKS2 header that does not
// match, a key that does not open it) and wipeVolume is false.
var ErrLuksMismatch = errors.New("cannot reuse the device for the LUKS volume")

// ErrInUse means a device the config would change is in use: mounted, an
// active swap area, a RAID member or under an open LUKS volume.
var ErrInUse = errors.New("device is in use")

// ErrTableChanged means the GPT read to apply a plan does not hold the
// partitions the plan was made from (sfdisk read something else): the
// stage writes nothing rather than guess.
var ErrTableChanged = errors.New("the partition table differs from the one planned on")
