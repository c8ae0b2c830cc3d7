package disks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/sys"
)

// This file is what `flint plan` uses of the stage: the stage's own reader
// of a disk's current state and its reuse rule, so that the plan it shows
// comes from the same code as the plan the stage applies. None of it writes.

// Observe reads a whole disk as the stage does before planning it: its
// partition table (sfdisk --json), its size and sector size as the kernel
// sees them, and what of it is mounted, an active swap area or held by an
// array or a device-mapper target. d needs Runner, Devices and Users (and
// Swaps, nil to read /proc/swaps).
func Observe(ctx context.Context, d Deps, node string) (DiskState, error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	s := &stage{Deps: d, log: d.Logger}
	var err error
	if s.swaps, err = s.activeSwaps(); err != nil {
		return DiskState{}, err
	}
	return s.observeDisk(ctx, node)
}

// ReadTable reads the partition table of a disk image (a regular file)
// with sfdisk --json, as Observe does for a block device; a file without a
// table is a DiskState with an empty Table. The caller sets Sectors and
// LogicalSectorSize (sfdisk reports 512 for a regular file) and knows that
// nothing can use a file the way a mount uses a device.
func ReadTable(ctx context.Context, r Runner, path string) (DiskState, error) {
	out, err := r.Run(ctx, "sfdisk", "--json", path)
	if err != nil && !noTable(out, err) {
		return DiskState{}, fmt.Errorf("disk image %s: %w", path, err)
	}
	state, err := ParseSfdiskJSON(out)
	if err != nil {
		return DiskState{}, fmt.Errorf("disk image %s: %w", path, err)
	}
	state.Device = path
	return state, nil
}

// ProbeAt runs `blkid -p -o export` on path, or with size > 0 on the size
// bytes from byte offset of path (-O, -S): how `flint plan` looks at what
// a partition of a disk image, or a partition a plan has yet to create,
// would hold. It never reads blkid's cache. Several signatures (blkid's
// exit status 8) are an error naming them: the stage would go by the first
// that wipefs lists, which a plan does not guess.
func ProbeAt(ctx context.Context, r Runner, path string, offset, size int64) (Probed, error) {
	args := []string{"-p", "-o", "export"}
	if size > 0 {
		args = append(args, "-O", strconv.FormatInt(offset, 10), "-S", strconv.FormatInt(size, 10))
	}
	out, err := r.Run(ctx, "blkid", append(args, path)...)
	var ce *sys.CommandError
	switch {
	case err == nil:
		return parseBlkidExport(out), nil
	case errors.As(err, &ce) && ce.ExitCode == 2:
		return Probed{}, nil
	case errors.As(err, &ce) && ce.ExitCode == 8:
		return Probed{}, fmt.Errorf("probing %s at byte %d: more than one signature: %w", path, offset, err)
	}
	return Probed{}, fmt.Errorf("probing %s at byte %d: %w", path, offset, err)
}

// ReuseFilesystem is the stage's reuse rule (see reuse): true keeps what
// p found, false creates the filesystem, an error wrapping
// ErrFilesystemMismatch is what the stage refuses.
func ReuseFilesystem(f config.Filesystem, p Probed) (bool, error) { return reuse(f, p) }

// BlockFilesystems are the config's filesystems the stage handles (a
// format is set and is not virtiofs).
func BlockFilesystems(fss []config.Filesystem) []config.Filesystem { return blockFilesystems(fss) }
