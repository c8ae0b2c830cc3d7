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
