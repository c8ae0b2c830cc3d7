// Package umount is the umount stage (coreos/ignition
// internal/exec/stages/umount/umount.go): it unmounts what the mount stage
// mounted under the target root, the deepest first, before switch-root (the
// mount unit's ExecStop). A mount that is busy is retried a few times, since
// a process the files stage started (a udev probe, a relabel) may still hold
// it for a moment; any other error fails at once.
//
// Family: boot stages (internal/README.md).
package umount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"syscall"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/stages/mount"
)

// Retries and Backoff bound the retries of a busy mount: 5 tries over
// about 3 seconds.
const (
	Retries = 5
	Backoff = 200 * time.Millisecond
)

// Unmounter unmounts with umount2(2) (sys.Mounter).
type Unmounter interface {
	Unmount(target string) error
}

// Deps is what the stage needs.
type Deps struct {
	Filesystems []config.Filesystem
	Root        string
	Logger      *slog.Logger
	Unmounter   Unmounter
	// Backoff is the first wait before retrying a busy mount, doubled
	// each time; 0 means Backoff.
	Backoff time.Duration
	// MountInfo is the mount table; "" means DefaultMountInfo.
	MountInfo string
}

// Run unmounts every mountable filesystem of the config under the root,
// in the reverse of the mount stage's order. Only paths the mount table
// lists are unmounted: one that is not there (the mount stage failed
// before it, or it is unmounted already) is skipped, so the stage can run
// again; and a path through a symlink, which the mount stage refused, is
// never handed to umount2, which would follow it out of the root. It
// tries every filesystem and returns every failure.
func Run(ctx context.Context, d Deps) error {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Backoff == 0 {
		d.Backoff = Backoff
	}
	if d.MountInfo == "" {
		d.MountInfo = DefaultMountInfo
	}
	fss := mount.Mountable(d.Filesystems)
	if len(fss) == 0 {
		d.Logger.Info("no filesystem of the config has a path: nothing to unmount")
		return nil
	}
	mounted, err := mountpoints(d.MountInfo)
	if err != nil {
		return err
	}
	var errs []error
	for i := len(fss) - 1; i >= 0; i-- {
		f := fss[i]
		target := mount.Target(d.Root, f)
		if !mounted[target] {
			d.Logger.Info("not mounted: nothing to unmount", "path", target)
			continue
		}
		if err := unmount(ctx, d, target); err != nil {
			errs = append(errs, fmt.Errorf("filesystem %s on %s: %w", f.Device, *f.Path, err))
		}
	}
	return errors.Join(errs...)
}

func unmount(ctx context.Context, d Deps, target string) error {
	op := oplog.Begin(d.Logger, "umount", "unmounting "+target)
	wait := d.Backoff
	for try := 1; ; try++ {
		err := d.Unmounter.Unmount(target)
		switch {
		case err == nil:
			op.Finish()
			return nil
		case errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ENOENT):
			op.Finish("result", "not mounted")
			return nil
		case !errors.Is(err, syscall.EBUSY) || try == Retries:
			return op.Fail(err)
		}
		op.Log().Warn("mount busy: retrying", "try", try, "of", Retries, "wait", wait)
		select {
		case <-ctx.Done():
			return op.Fail(fmt.Errorf("%w (after %v)", ctx.Err(), err))
		case <-time.After(wait):
		}
		wait *= 2
	}
}
