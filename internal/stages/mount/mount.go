package mount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/sys"

	"github.com/flintboot/flint/internal/selinux"
)

// Runner runs a command and returns its standard output (sys.Runner).
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Deps is what the stage needs.
type Deps struct {
	// Filesystems are the config's storage.filesystems.
	Filesystems []config.Filesystem
	// Root is the target root directory (/sysroot in the initramfs).
	Root   string
	Logger *slog.Logger
	// Runner runs mount(8) and setfiles(8).
	Runner Runner
	// Mounter mounts with mount(2) what mount(8) would mount with it
	// alone (planKernelMount); mount(8) mounts the rest, and what
	// mount(2) refused, so that its error is the one reported. Nil: mount(8)
	// mounts everything.
	Mounter Mounter
	// host is the system the stage looks at before mount(2) (tests).
	host host
}

// Mountable returns the filesystems the stages mount: those with a path
// and a format that can be mounted (not "", "none" or "swap"), the
// shallowest path first; filesystems of the same depth keep the config's
// order. The umount stage walks the list backwards.
func Mountable(fss []config.Filesystem) []config.Filesystem {
	var out []config.Filesystem
	for _, f := range fss {
		if f.Path == nil || *f.Path == "" || f.Format == nil {
			continue
		}
		switch *f.Format {
		case "", "none", "swap":
			continue
		}
		out = append(out, f)
	}
	// sort.SliceStable: a generic sort of a struct type costs about
	// 10 KB of binary.
	sort.SliceStable(out, func(i, j int) bool { return depth(*out[i].Path) < depth(*out[j].Path) })
	return out
}

// depth is the number of components of p: "/" is 0, "/var/lib" is 2.
func depth(p string) int {
	p = path.Clean("/" + p)
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// Target is where f is mounted: its path under root.
func Target(root string, f config.Filesystem) string {
	return filepath.Join(root, path.Clean("/"+*f.Path))
}

// Run mounts every mountable filesystem under the root, shallowest first.
// created lists the directories it made for mountpoints, as paths inside
// the root ("/var/home"), in the order made; Stage keeps them in the
// state. On failure, created still lists what was made, and what was
// mounted stays mounted for the umount stage (run by the unit's ExecStop).
func Run(ctx context.Context, d Deps) (created []string, err error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	fss := Mountable(d.Filesystems)
	if len(fss) == 0 {
		d.Logger.Info("no filesystem of the config has a path: nothing to mount")
		return nil, nil
	}
	label, err := selinuxLabeller(d.Root, d.Runner)
	if err != nil {
		return nil, err
	}
	if label == nil {
		d.Logger.Info("SELinux is not enabled in the target root: new mountpoints are not relabelled", "config", filepath.Join(d.Root, selinux.ConfigPath))
	}
	for _, f := range fss {
		made, err := mountOne(ctx, d, label, f)
		created = append(created, made...)
		if err != nil {
			return created, err
		}
	}
	return created, nil
}

func mountOne(ctx context.Context, d Deps, label labeller, f config.Filesystem) (created []string, err error) {
	target := Target(d.Root, f)
	created, err = makeMountpoint(d.Root, *f.Path)
	if err != nil {
		return created, fmt.Errorf("filesystem %s on %s: %w", f.Device, *f.Path, err)
	}
	if len(created) > 0 {
		d.Logger.Info("created the mountpoint", "path", *f.Path, "directories", created)
		if label != nil {
			if err := label(ctx, d.Logger, d.Root, created); err != nil {
				return created, fmt.Errorf("filesystem %s on %s: %w", f.Device, *f.Path, err)
			}
		}
	}

	if err := mountFS(ctx, d, f, target); err != nil {
		return created, err
	}

	if label != nil {
		fresh, err := freshlyMade(target)
		if err != nil {
			return created, fmt.Errorf("filesystem %s on %s: %w", f.Device, *f.Path, err)
		}
		if fresh {
			if err := label(ctx, d.Logger, d.Root, []string{path.Clean("/" + *f.Path)}); err != nil {
				return created, fmt.Errorf("filesystem %s on %s: %w", f.Device, *f.Path, err)
			}
		}
	}
	return created, nil
}

// mountFS mounts f on target: with mount(2) when that is what mount(8)
// would do (planKernelMount), which saves a process (0.06 s in an
// emulated VM), else with mount(8), as Ignition does
// (internal/exec/stages/mount/mount.go). When mount(2) fails, mount(8)
// tries too, and its error is the one returned: it has the messages an
// operator knows, and it retries a write-protected device read-only.
// The log says which of them mounted it.
func mountFS(ctx context.Context, d Deps, f config.Filesystem, target string) error {
	args := []string{"-t", *f.Format}
	if len(f.MountOptions) > 0 {
		args = append(args, "-o", strings.Join(f.MountOptions, ","))
	}
	args = append(args, f.Device, target)
	argv := sys.QuoteArgv(append([]string{"mount"}, args...))
	what := "mounting " + f.Device + " on " + *f.Path

	var op *oplog.Op
	if d.Mounter == nil {
		op = oplog.Begin(d.Logger, "mount", what+": "+argv)
	} else if k, why := planKernelMount(f, target, d.host); why != "" {
		op = oplog.Begin(d.Logger, "mount", what+" with mount(8), since "+why+": "+argv)
	} else {
		op = oplog.Begin(d.Logger, "mount", what+": "+k.String())
		err := d.Mounter.Mount(k.source, k.target, k.fstype, k.flags, k.data)
		if err == nil {
			op.Finish("with", "mount(2)")
			return nil
		}
		op.Log().Info("mount(2) failed: mounting with mount(8), whose error is the one reported: "+argv, "error", err)
	}
	if _, err := d.Runner.Run(ctx, "mount", args...); err != nil {
		return op.Fail(fmt.Errorf("filesystem %s on %s: %w", f.Device, *f.Path, err))
	}
	op.Finish("with", "mount(8)")
	return nil
}

// makeMountpoint checks every component of p under root, from the root
// down: an existing one must be a real directory (Lstat: a symlink is
// refused, never followed), and the missing ones are created 0755.
// created lists those, as paths inside the root.
func makeMountpoint(root, p string) (created []string, err error) {
	cur := "/"
	for _, c := range strings.Split(strings.Trim(path.Clean("/"+p), "/"), "/") {
		if c == "" {
			continue
		}
		cur = path.Join(cur, c)
		host := filepath.Join(root, cur)
		fi, err := os.Lstat(host)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(host, 0o755); err != nil {
				return created, fmt.Errorf("creating mountpoint directory %s: %w", cur, err)
			}
			// The umask must not narrow it: Ignition's mode.
			if err := os.Chmod(host, 0o755); err != nil {
				return created, fmt.Errorf("creating mountpoint directory %s: %w", cur, err)
			}
			created = append(created, cur)
		case err != nil:
			return created, fmt.Errorf("checking mountpoint %s: %w", cur, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(host)
			return created, fmt.Errorf("%s (to %s) %w", cur, target, ErrSymlink)
		case !fi.IsDir():
			return created, fmt.Errorf("%s (%s) %w", cur, fi.Mode().Type(), ErrNotDirectory)
		}
	}
	return created, nil
}

// freshlyMade says whether the filesystem mounted on dir is new: empty, or
// holding only lost+found (what mkfs.ext4 leaves).
func freshlyMade(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("reading the new mount: %w", err)
	}
	for _, e := range entries {
		if e.Name() != "lost+found" {
			return false, nil
		}
	}
	return true, nil
}
