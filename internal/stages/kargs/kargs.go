package kargs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/sys"
)

// BootLabel is the label of the filesystem holding the boot loader
// entries, the one Ignition's example helper mounts
// (/dev/disk/by-label/boot).
const BootLabel = "boot"

// entriesGlob finds the BLS entries on the boot filesystem (on ostree
// systems loader is a symlink to loader.0 or loader.1, which Glob follows).
const entriesGlob = "loader/entries/*.conf"

// Runner runs a command and returns its standard output (sys.Runner).
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Deps is what the stage needs.
type Deps struct {
	Args   config.KernelArguments
	Logger *slog.Logger
	// Runner runs the helper, or blkid, mount and umount.
	Runner Runner
	// Helper, when set, is the distro's program that applies the
	// arguments (and reboots) instead of the built-in editor.
	Helper string
	// BootDevice is the boot filesystem's device; "" means the one
	// labelled BootLabel.
	BootDevice string
	// DevDir is where udev's /dev/disk/by-label links are looked for;
	// "" means /dev.
	DevDir string
	// DeviceTimeout is how long the stage waits for the filesystem
	// labelled boot to appear: in the initramfs it can start before the
	// kernel and udev have seen the boot disk. 0 waits not at all.
	DeviceTimeout time.Duration
	// DevicePoll is how often the wait looks again; 0 means 250 ms.
	DevicePoll time.Duration
	// TempDir is where the boot filesystem is mounted for the edit; ""
	// means os.TempDir().
	TempDir string
	// RebootFlag is a file the stage creates when it changed an entry,
	// so that the distro (or a test) knows a reboot is due; "" writes
	// none.
	RebootFlag string
	// Reboot, when set, is called after a change (Stage's runs
	// `systemctl reboot` in the initramfs only).
	Reboot func(ctx context.Context) error
	// RebootWait, when not 0, is how long the stage waits after Reboot
	// for the shutdown to stop it (its context ends: SIGTERM), so that the
	// stages after it never start with the old arguments while the
	// reboot job runs (the stage units have no default dependencies, so
	// nothing else orders them against the shutdown). It then returns
	// success; if the wait runs out, ErrNoReboot.
	RebootWait time.Duration
}

// Run applies the config's kernel arguments; see the package comment.
// changed says whether a boot loader entry was rewritten (always false
// with a helper, which reboots by itself).
func Run(ctx context.Context, d Deps) (changed bool, err error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if len(d.Args.ShouldExist) == 0 && len(d.Args.ShouldNotExist) == 0 {
		d.Logger.Info("the config has no kernel arguments: nothing to do")
		return false, nil
	}
	if d.Helper != "" {
		return false, runHelper(ctx, d)
	}
	dev, err := bootDevice(ctx, d)
	if err != nil {
		return false, err
	}
	changed, err = editBootFilesystem(ctx, d, dev)
	if err != nil || !changed {
		// changed with an error: some entries were written.
		return changed, err
	}
	if d.RebootFlag != "" {
		if err := os.MkdirAll(filepath.Dir(d.RebootFlag), 0o755); err != nil {
			return true, fmt.Errorf("writing the reboot flag: %w", err)
		}
		if err := os.WriteFile(d.RebootFlag, []byte("kernel arguments changed on "+dev+"\n"), 0o644); err != nil {
			return true, fmt.Errorf("writing the reboot flag: %w", err)
		}
	}
	if d.Reboot == nil {
		d.Logger.Info("kernel arguments changed: the new ones take effect at the next boot", "flag", d.RebootFlag)
		return true, nil
	}
	op := oplog.Begin(d.Logger, "reboot", "rebooting so that the new kernel arguments take effect")
	if err := d.Reboot(ctx); err != nil {
		return true, op.Fail(fmt.Errorf("rebooting after changing the kernel arguments: %w", err))
	}
	if d.RebootWait == 0 {
		op.Finish()
		return true, nil
	}
	timer := time.NewTimer(d.RebootWait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		op.Finish("result", "stopped by the shutdown")
		return true, nil
	case <-timer.C:
		return true, op.Fail(fmt.Errorf("%w within %v of asking for it", ErrNoReboot, d.RebootWait))
	}
}

// HelperArgs is Ignition's helper argv: every shouldExist entry
// after --should-exist, then every shouldNotExist entry after
// --should-not-exist, each entry one argument.
func HelperArgs(a config.KernelArguments) []string {
	var args []string
	for _, e := range a.ShouldExist {
		args = append(args, "--should-exist", e)
	}
	for _, e := range a.ShouldNotExist {
		args = append(args, "--should-not-exist", e)
	}
	return args
}

func runHelper(ctx context.Context, d Deps) error {
	args := HelperArgs(d.Args)
	op := oplog.Begin(d.Logger, "kargs", "applying kernel arguments with the distro helper: "+sys.QuoteArgv(append([]string{d.Helper}, args...)))
	if _, err := d.Runner.Run(ctx, d.Helper, args...); err != nil {
		return op.Fail(fmt.Errorf("kernel arguments helper: %w", err))
	}
	op.Finish()
	return nil
}

// bootDevice returns the configured device, or the filesystem labelled
// boot (findBootDevice), waiting up to DeviceTimeout for it to appear.
func bootDevice(ctx context.Context, d Deps) (string, error) {
	if d.BootDevice != "" {
		return d.BootDevice, nil
	}
	poll := d.DevicePoll
	if poll == 0 {
		poll = 250 * time.Millisecond
	}
	start := time.Now()
	var op *oplog.Op
	for {
		dev, err := findBootDevice(ctx, d)
		waited := time.Since(start).Round(time.Millisecond)
		switch {
		case err == nil && op != nil:
			op.Finish("device", dev)
		case !errors.Is(err, ErrNoBootFilesystem):
		case waited >= d.DeviceTimeout && op != nil:
			return "", op.Fail(fmt.Errorf("%w after waiting %v", err, waited))
		case waited >= d.DeviceTimeout:
			return "", err
		default:
			if op == nil {
				op = oplog.Begin(d.Logger, "kargs", "waiting for the filesystem labelled "+BootLabel)
			}
			select {
			case <-ctx.Done():
				return "", op.Fail(fmt.Errorf("%w: stopped after waiting %v: %w", err, waited, ctx.Err()))
			case <-time.After(poll):
			}
			continue
		}
		return dev, err
	}
}

// findBootDevice finds the filesystem labelled boot: udev's link when
// there is one, else blkid asked for every such filesystem (without its
// cache, which can be stale in the initramfs), refusing two.
func findBootDevice(ctx context.Context, d Deps) (string, error) {
	devDir := d.DevDir
	if devDir == "" {
		devDir = "/dev"
	}
	link := filepath.Join(devDir, "disk/by-label", BootLabel)
	if _, err := os.Stat(link); err == nil {
		return link, nil
	}
	out, err := d.Runner.Run(ctx, "blkid", "-c", "/dev/null", "-o", "device", "-t", "LABEL="+BootLabel)
	var ce *sys.CommandError
	if errors.As(err, &ce) && ce.ExitCode == 2 {
		// blkid(8): exit status 2 means nothing matched.
		out, err = nil, nil
	}
	if err != nil {
		return "", fmt.Errorf("looking for the filesystem labelled %s: %w", BootLabel, err)
	}
	devs := strings.Fields(string(out))
	switch len(devs) {
	case 0:
		return "", fmt.Errorf("%w: no filesystem is labelled %s", ErrNoBootFilesystem, BootLabel)
	case 1:
		return devs[0], nil
	}
	return "", fmt.Errorf("%w: %s", ErrAmbiguousBootFilesystem, strings.Join(devs, ", "))
}

// editBootFilesystem mounts dev read-write in a new temporary directory,
// edits every entry, and unmounts it whatever happened.
func editBootFilesystem(ctx context.Context, d Deps, dev string) (changed bool, err error) {
	dir, err := os.MkdirTemp(d.TempDir, "flint-boot-")
	if err != nil {
		return false, fmt.Errorf("boot filesystem %s: %w", dev, err)
	}
	defer os.Remove(dir)
	op := oplog.Begin(d.Logger, "kargs", "mounting the boot filesystem "+dev+" on "+dir)
	if _, err := d.Runner.Run(ctx, "mount", "-o", "rw", dev, dir); err != nil {
		return false, op.Fail(fmt.Errorf("boot filesystem %s: %w", dev, err))
	}
	op.Finish()
	defer func() {
		op := oplog.Begin(d.Logger, "kargs", "unmounting the boot filesystem "+dev)
		// A fresh context: the edit may have been cancelled, the
		// mount must still go.
		if _, uerr := d.Runner.Run(context.WithoutCancel(ctx), "umount", dir); uerr != nil {
			err = errors.Join(err, op.Fail(fmt.Errorf("boot filesystem %s: %w", dev, uerr)))
			return
		}
		op.Finish()
	}()

	entries, err := filepath.Glob(filepath.Join(dir, entriesGlob))
	if err != nil {
		return false, fmt.Errorf("boot filesystem %s: %w", dev, err)
	}
	if len(entries) == 0 {
		return false, fmt.Errorf("boot filesystem %s: %w in %s; flint edits only Boot Loader Specification entries, "+
			"so this system needs a kargs helper (see docs)", dev, ErrNoEntries, entriesGlob)
	}
	// Plan every entry before writing any: a config that conflicts, or
	// an entry that cannot be read, leaves all of them as they were.
	var edits []entryEdit
	for _, e := range entries {
		name, _ := filepath.Rel(dir, e)
		ed, err := planEntry(e, name, d.Args)
		if err != nil {
			return false, fmt.Errorf("boot filesystem %s: entry %s: %w", dev, name, err)
		}
		if ed == nil {
			d.Logger.Info("kernel arguments already as the config says", "entry", name)
			continue
		}
		edits = append(edits, *ed)
	}
	for _, ed := range edits {
		op := oplog.Begin(d.Logger, "kargs", "rewriting the options of "+ed.name)
		// Atomic and synced: a power cut leaves the old entry or the
		// new one, never half of either (a machine that cannot boot is
		// worse than one with the old arguments).
		if err := sys.WriteFileAtomicBytes(ed.path, ed.mode, ed.data); err != nil {
			return changed, op.Fail(fmt.Errorf("boot filesystem %s: entry %s: %w", dev, ed.name, err))
		}
		op.Finish("before", ed.before, "after", ed.after)
		changed = true
	}
	return changed, nil
}

// entryEdit is the new contents of one BLS entry.
type entryEdit struct {
	path, name    string
	data          []byte
	mode          os.FileMode
	before, after string
}

// planEntry returns the new contents of one BLS entry, or nil when its
// options need no change. An entry with several options lines (which BLS
// allows) gets them as one line in place of the first; an entry without
// any gets one at its end.
func planEntry(path, name string, a config.KernelArguments) (*entryEdit, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var lines []string
	first := -1
	var opts []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		key, value := splitKey(line)
		if key == "options" {
			opts = append(opts, value)
			if first >= 0 {
				continue
			}
			first = len(lines)
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	old := strings.Join(opts, " ")
	updated, changed := Edit(old, a.ShouldExist, a.ShouldNotExist)
	if !changed {
		return nil, nil
	}
	if again, loops := Edit(updated, a.ShouldExist, a.ShouldNotExist); loops {
		// Rewriting would change the entry at every boot: a reboot
		// loop. Validation cannot see it (the overlap may be partial).
		return nil, fmt.Errorf("%w: applying them to %q gives %q, and again %q", ErrConflict, old, updated, again)
	}
	if first < 0 {
		lines = append(lines, "options "+updated)
	} else {
		lines[first] = "options " + updated
	}
	return &entryEdit{path: path, name: name, data: []byte(strings.Join(lines, "\n") + "\n"), mode: fi.Mode().Perm(), before: old, after: updated}, nil
}

// splitKey splits a BLS line into its key and value (separated by white
// space); comments and blank lines have no key.
func splitKey(line string) (key, value string) {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, "#") {
		return "", ""
	}
	i := strings.IndexFunc(t, func(r rune) bool { return r == ' ' || r == '\t' })
	if i < 0 {
		return t, ""
	}
	return t[:i], strings.TrimSpace(t[i:])
}
