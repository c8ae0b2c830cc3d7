// Package umount is the umount stage (ignition.md §5.6): it unmounts what
// the mount stage mounted under the target root, the deepest first, before
// switch-root (the mount unit's ExecStop). A mount that is busy is retried
// a few times, since a process the files stage started (a udev probe, a
// relabel) may still hold it for a moment; any other error fails at once.
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
}

// Run unmounts every mountable filesystem of the config under the root,
// in the reverse of the mount stage's order. A path that is not mounted
// (EINVAL, or ENOENT for a mountpoint never made: the mount stage failed
// before it, or it was unmounted already) is skipped, so the stage can run again. It tries every filesystem and
// returns every failure.
func Run(ctx context.Context, d Deps) error {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Backoff == 0 {
		d.Backoff = Backoff
	}
	fss := mount.Mountable(d.Filesystems)
	if len(fss) == 0 {
		d.Logger.Info("no filesystem of the config has a path: nothing to unmount")
		return nil
	}
	var errs []error
	for i := len(fss) - 1; i >= 0; i-- {
		f := fss[i]
		if err := unmount(ctx, d, mount.Target(d.Root, f)); err != nil {
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
