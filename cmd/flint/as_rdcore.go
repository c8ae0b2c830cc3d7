package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/flags"
	"github.com/flintboot/flint/internal/install"
	"github.com/flintboot/flint/internal/streamhash"
	"github.com/flintboot/flint/internal/sys"
)

// rdcoreCommand is rdcore's command line (coreos/coreos-installer
// src/bin/rdcore/cmdline.rs): the helper Fedora CoreOS's initramfs calls.
// zipl exists only on s390x, as upstream's.
func rdcoreCommand() *flags.Command {
	bootOpts := func(also ...string) []flags.Option {
		return []flags.Option{
			{Long: "boot-device", Value: "DEVPATH", Conflicts: append([]string{"boot-mount"}, also...), Help: "Boot device containing BLS entries to modify"},
			{Long: "boot-mount", Value: "BOOT_MOUNT", Conflicts: append([]string{"boot-device"}, also...), Help: "Boot mount containing BLS entries to modify"},
		}
	}
	c := &flags.Command{
		Name:    "rdcore",
		Version: coreosInstallerVersion + " (flint " + version + ")",
		Subcommands: []*flags.Command{{
			Name:  "rootmap",
			About: "Generate rootmap kargs and optionally inject into BLS configs",
			Options: append(bootOpts(),
				flags.Option{Long: "flint-root", Value: "DIR", Hidden: true, Help: "flint: the root /proc/self/mounts and /sys are under (for tests)"},
			),
			Args: []flags.Arg{{Name: "ROOT_MOUNT", Help: "Path to rootfs mount"}},
		}, {
			Name:  "bind-boot",
			About: "Generate bootmap kargs and binds bootfs to rootfs and GRUB",
			Args:  []flags.Arg{{Name: "ROOT_MOUNT", Help: "Path to rootfs mount"}, {Name: "BOOT_MOUNT", Help: "Path to bootfs mount"}},
			Options: []flags.Option{
				{Long: "flint-root", Value: "DIR", Hidden: true, Help: "flint: the root /proc/self/mounts and /run are under (for tests)"},
			},
		}, {
			Name:  "kargs",
			About: "Modify kargs in BLS configs",
			Options: append(bootOpts("current"),
				flags.Option{Long: "current", Conflicts: []string{"boot-device", "boot-mount"}, Help: "Dry run using kargs from this boot"},
				flags.Option{Long: "override-options", Value: "OPTIONS", Hidden: true, Help: "Modify this option string instead of fetching from BLS entry"},
				flags.Option{Long: "create-if-changed", Value: "PATH", Help: "File to create if BLS entry was modified"},
				flags.Option{Long: "append", Value: "ARG", Repeat: true, Help: "Append kernel arg"},
				flags.Option{Long: "append-if-missing", Aliases: []string{"should-exist"}, Value: "ARG", Repeat: true, Help: "Append kernel arg if missing"},
				flags.Option{Long: "delete", Aliases: []string{"should-not-exist"}, Value: "ARG", Repeat: true, Help: "Delete kernel arg"},
				flags.Option{Long: "flint-root", Value: "DIR", Hidden: true, Help: "flint: the root /proc/cmdline is read under (for tests)"},
			),
		}, {
			Name:  "stream-hash",
			About: "Copy data from stdin to stdout, checking piecewise hashes",
			Args:  []flags.Arg{{Name: "hash-file", Help: "Path to the piecewise hash file"}},
		}, {
			Name:  "verify-unique-fs-label",
			About: "Checks there is only one filesystem with given label",
			Options: []flags.Option{
				{Long: "rereadpt", Help: "Force rereading of partition table"},
			},
			Args: []flags.Arg{{Name: "LABEL", Help: "Filesystem's label"}},
		}},
	}
	if runtime.GOARCH == "s390x" {
		c.Subcommands = append(c.Subcommands, &flags.Command{
			Name: "zipl", About: "Runs zipl",
			Options: []flags.Option{
				{Long: "boot-mount", Value: "BOOT_MOUNT", Required: true, Help: "Boot device containing BLS entries to use"},
				{Long: "secex-mode", Value: "SECEX_MODE", Default: "auto", Choices: []string{"auto", "enforce", "disable"}, Help: "Zipl mode for Secure Execution"},
				{Long: "hostkey", Short: 'k', Value: "HOSTKEY", Repeat: true, Help: "Path to hostkey"},
				{Long: "append-karg", Aliases: []string{"kargs"}, Value: "KARG", Repeat: true, Help: "Append kernel argument"},
				{Long: "append-file", Value: "FILE", Repeat: true, Help: "Append file to sdboot image"},
			},
		})
	}
	return c
}

// rdRunner runs a command and returns its standard output (sys.Runner).
type rdRunner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// runRdcore is flint as rdcore.
func runRdcore(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	p, err := parseClap(rdcoreCommand(), args, stdout, stderr)
	if p == nil {
		return err
	}
	r := sys.Runner{}
	switch p.Path[1] {
	case "kargs":
		err = rdcoreKargs(ctx, r, p, stdout)
	case "stream-hash":
		err = rdcoreStreamHash(p.Args[0], stdin, stdout)
	case "verify-unique-fs-label":
		var reread func(context.Context) error
		if p.Bool("rereadpt") {
			reread = func(ctx context.Context) error { return rereadAllDisks(ctx, r) }
		}
		err = verifyUniqueFsLabel(ctx, r, p.Args[0], reread)
	case "rootmap":
		if err = rdcoreRootmap(ctx, rdEnv{r, p.String("flint-root")}, p, stdout, stderr); err != nil {
			err = fmt.Errorf("Configuring rootmap: %w", err)
		}
	case "bind-boot":
		if err = rdcoreBindBoot(ctx, r, p.String("flint-root"), p.Args[0], p.Args[1]); err != nil {
			err = fmt.Errorf("Failed to bind boot: %w", err)
		}
	case "zipl":
		err = errors.New("flint does not run zipl: IBM Z boot records are not supported")
	}
	if err != nil {
		// rdcore's main returns anyhow's error: "Error: …", status 1.
		return ciFail(stderr, err)
	}
	return nil
}

// rdcoreKargs edits the kernel arguments as rdcore kargs does
// (coreos/coreos-installer src/bin/rdcore/kargs.rs): of the running
// kernel's command line (--current, a dry run) or of the newest BLS entry
// on the boot filesystem (--boot-mount, or --boot-device mounted for the
// edit), through flint install's editor (deletions, then appends, then
// appends if missing). It always prints the resulting line, and creates
// --create-if-changed's file when the line changed.
func rdcoreKargs(ctx context.Context, r rdRunner, p *flags.Parsed, stdout io.Writer) error {
	ed := install.KargsEditor{
		Delete:          p.Strings("delete"),
		Append:          p.Strings("append"),
		AppendIfMissing: p.Strings("append-if-missing"),
	}
	edited := len(ed.Delete)+len(ed.Append)+len(ed.AppendIfMissing) > 0
	modify := func(orig string) (string, bool, error) {
		next := orig
		if edited {
			var err error
			if next, err = ed.Apply(orig); err != nil {
				return "", false, err
			}
		}
		fmt.Fprintln(stdout, next)
		if next == orig {
			return orig, false, nil
		}
		if path := p.String("create-if-changed"); path != "" {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				return "", false, fmt.Errorf("creating %s: %w", path, err)
			}
			if err := f.Close(); err != nil {
				return "", false, fmt.Errorf("creating %s: %w", path, err)
			}
		}
		return next, true, nil
	}
	switch {
	case p.Has("override-options"):
		_, _, err := modify(strings.TrimSpace(p.String("override-options")))
		return wrapIf(err, "modifying options")
	case p.Bool("current"):
		raw, err := os.ReadFile(filepath.Join(p.String("flint-root"), "/proc/cmdline"))
		if err != nil {
			return fmt.Errorf("reading kernel command line: %w", err)
		}
		_, _, err = modify(strings.TrimSpace(string(raw)))
		return wrapIf(err, "modifying options")
	case p.Has("boot-mount"):
		_, err := install.VisitBLSOptions(p.String("boot-mount"), modify)
		return wrapIf(err, "visiting BLS options")
	case p.Has("boot-device"):
		dev := p.String("boot-device")
		dir, err := os.MkdirTemp("", "rdcore-boot-")
		if err != nil {
			return err
		}
		defer os.Remove(dir)
		if _, err := r.Run(ctx, "mount", "-o", "rw", dev, dir); err != nil {
			return fmt.Errorf("mounting %s: %w", dev, err)
		}
		_, err = install.VisitBLSOptions(dir, modify)
		if _, uerr := r.Run(context.WithoutCancel(ctx), "umount", dir); uerr != nil {
			err = errors.Join(err, fmt.Errorf("unmounting %s: %w", dev, uerr))
		}
		return wrapIf(err, "visiting BLS options")
	}
	return errors.New("one of --boot-device, --boot-mount, or --current required")
}

func wrapIf(err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// rdcoreStreamHash is rdcore stream-hash HASHFILE: standard input to
// standard output, each piece checked before it is written.
func rdcoreStreamHash(hashFile string, stdin io.Reader, stdout io.Writer) error {
	f, err := os.Open(hashFile)
	if err != nil {
		return fmt.Errorf("opening %s: %w", hashFile, err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(stdout, 1<<20)
	if err := streamhash.Copy(w, stdin, f); err != nil {
		return err
	}
	return w.Flush()
}

// verifyUniqueFsLabel fails unless exactly one filesystem carries label,
// as rdcore verify-unique-fs-label checks the boot filesystem
// (coreos/coreos-installer src/bin/rdcore/unique_fs.rs, src/blockdev.rs
// get_filesystems_with_label): every device blkid knows, probed (not its
// cache, stale in the initramfs), RAID members left out (they carry their
// array's label), one device per UUID (multipath's paths to one disk).
// reread, when set, first makes the kernel reread every disk's partition
// table (--rereadpt).
func verifyUniqueFsLabel(ctx context.Context, r rdRunner, label string, reread func(context.Context) error) error {
	if reread != nil {
		if err := reread(ctx); err != nil {
			return err
		}
	}
	fss, err := probeFilesystems(ctx, r)
	if err != nil {
		return err
	}
	var found, raid []string
	uuids := map[string]bool{}
	for _, fs := range fss {
		if fs["LABEL"] != label {
			continue
		}
		if fs["USAGE"] == "raid" {
			raid = append(raid, fs["DEVNAME"])
			continue
		}
		if u := fs["UUID"]; u != "" {
			if uuids[u] {
				continue
			}
			uuids[u] = true
		}
		found = append(found, fs["DEVNAME"])
	}
	if len(found) == 1 {
		return nil
	}
	if len(found) == 0 && len(raid) > 0 {
		return fmt.Errorf("No assembled filesystem labeled '%s', but found RAID member devices %s. Is the RAID array degraded or failed to assemble?", label, rustList(raid))
	}
	return fmt.Errorf("System has %d devices with a filesystem labeled '%s': %s", len(found), label, rustList(found))
}

// rustList writes names as rdcore's messages show a list: ["a", "b"].
func rustList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// probeFilesystems lists every block device blkid finds, then probes
// them (blkid -p) for their LABEL, UUID and USAGE, in blkid's export
// format: KEY=VALUE lines, a blank line between devices.
func probeFilesystems(ctx context.Context, r rdRunner) ([]map[string]string, error) {
	out, err := r.Run(ctx, "blkid", "--cache-file", "/dev/null", "-o", "device")
	var ce *sys.CommandError
	if errors.As(err, &ce) && ce.ExitCode == 2 {
		// blkid(8): 2 means no device found.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing block devices: %w", err)
	}
	devs := strings.Fields(string(out))
	if len(devs) == 0 {
		return nil, nil
	}
	out, err = r.Run(ctx, "blkid", append([]string{"-p", "-o", "export"}, devs...)...)
	if errors.As(err, &ce) && ce.ExitCode == 2 {
		// Some devices held nothing blkid knows; the others are listed.
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("probing block devices: %w", err)
	}
	var fss []map[string]string
	cur := map[string]string{}
	for _, line := range bytes.Split(out, []byte("\n")) {
		k, v, ok := strings.Cut(strings.TrimSpace(string(line)), "=")
		if !ok {
			if len(cur) > 0 {
				fss = append(fss, cur)
				cur = map[string]string{}
			}
			continue
		}
		if k == "DEVNAME" && len(cur) > 0 {
			fss = append(fss, cur)
			cur = map[string]string{}
		}
		cur[k] = v
	}
	if len(cur) > 0 {
		fss = append(fss, cur)
	}
	return fss, nil
}

// rereadAllDisks asks the kernel to reread the partition table of every
// disk lsblk lists, best effort (a disk with a mounted partition refuses),
// then waits for udev, as --rereadpt does: after the boot disk's UUIDs
// were regenerated, another path to it still shows the old ones.
func rereadAllDisks(ctx context.Context, r rdRunner) error {
	out, err := r.Run(ctx, "lsblk", "--noheadings", "--nodeps", "--list", "--paths", "--output", "NAME")
	if err != nil {
		return fmt.Errorf("listing disks: %w", err)
	}
	for _, dev := range strings.Fields(string(out)) {
		_ = rereadPartitionTable(dev)
	}
	if _, err := r.Run(ctx, "udevadm", "settle"); err != nil {
		return fmt.Errorf("waiting for udev: %w", err)
	}
	return nil
}

// espTypeGUID is the EFI System Partition's GPT type (UEFI 2.10, 5.3.3).
const espTypeGUID = "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"

// rdcoreBindBoot binds the boot filesystem to the root filesystem and GRUB
// to the boot filesystem, as rdcore bind-boot does (coreos/coreos-installer
// src/bin/rdcore/rootmap.rs, bind_boot): boot=UUID=… appended to the
// newest BLS entry unless it names a boot= already (and then, for the
// first boot's real root, the UUID in /run/coreos/bootfs_uuid); the root's
// UUID stamped in .root_uuid on the boot filesystem (a stamp naming
// another root is an error: the boot filesystem belongs to another
// install); and set BOOT_UUID="…" in grub2/bootuuid.cfg on the boot
// filesystem and in the GRUB vendor directory of every ESP on the boot
// filesystem's disks. root prefixes /proc/self/mounts and /run ("" is /).
func rdcoreBindBoot(ctx context.Context, r rdRunner, root, rootMount, bootMount string) error {
	bootDev, err := mountSource(root, bootMount)
	if err != nil {
		return err
	}
	// The physical root: on ostree systems the deployment is ROOT_MOUNT,
	// the filesystem is mounted at ROOT_MOUNT/sysroot.
	rootDev, err := mountSource(root, filepath.Join(rootMount, "sysroot"))
	if err != nil {
		return err
	}
	bootUUID, err := filesystemUUID(ctx, r, bootDev)
	if err != nil {
		return err
	}
	rootUUID, err := filesystemUUID(ctx, r, rootDev)
	if err != nil {
		return err
	}
	changed, err := install.VisitBLSOptions(bootMount, func(opts string) (string, bool, error) {
		if strings.HasPrefix(opts, "boot=") || strings.Contains(opts, " boot=") {
			return opts, false, nil
		}
		next, err := install.KargsEditor{Append: []string{"boot=UUID=" + bootUUID}}.Apply(opts)
		return next, err == nil, err
	})
	if err != nil {
		return fmt.Errorf("appending boot kargs: %w", err)
	}
	if changed {
		run := filepath.Join(root, "/run/coreos/bootfs_uuid")
		if err := os.MkdirAll(filepath.Dir(run), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", filepath.Dir(run), err)
		}
		if err := os.WriteFile(run, []byte(bootUUID+"\n"), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", run, err)
		}
	}
	stamp := filepath.Join(bootMount, ".root_uuid")
	if raw, err := os.ReadFile(stamp); err == nil {
		if bound := strings.TrimSpace(string(raw)); bound != rootUUID {
			return fmt.Errorf("boot filesystem already bound to a root filesystem (UUID: %s)", bound)
		}
	} else if err := os.WriteFile(stamp, []byte(rootUUID+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", stamp, err)
	}
	if runtime.GOARCH == "s390x" {
		// zipl, not GRUB, boots IBM Z.
		return nil
	}
	if err := writeBootUUIDDropin(bootUUID, filepath.Join(bootMount, "grub2/bootuuid.cfg")); err != nil {
		return err
	}
	esps, err := colocatedESPs(ctx, r, bootDev)
	if err != nil {
		return err
	}
	for _, esp := range esps {
		if err := bindESP(ctx, r, esp, bootUUID); err != nil {
			return err
		}
	}
	return nil
}

// bindESP mounts the ESP in a temporary directory and writes the GRUB
// drop-in beside the one vendor directory's grub.cfg.
func bindESP(ctx context.Context, r rdRunner, esp, bootUUID string) (err error) {
	dir, err := os.MkdirTemp("", "rdcore-esp-")
	if err != nil {
		return err
	}
	defer os.Remove(dir)
	if _, err := r.Run(ctx, "mount", "-t", "vfat", esp, dir); err != nil {
		return fmt.Errorf("mounting %s: %w", esp, err)
	}
	defer func() {
		if _, uerr := r.Run(context.WithoutCancel(ctx), "umount", dir); uerr != nil {
			err = errors.Join(err, fmt.Errorf("unmounting %s: %w", esp, uerr))
		}
	}()
	ents, err := os.ReadDir(filepath.Join(dir, "EFI"))
	if err != nil {
		return err
	}
	var vendors []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(dir, "EFI", e.Name(), "grub.cfg")); e.IsDir() && err == nil {
			vendors = append(vendors, filepath.Join("EFI", e.Name()))
		}
	}
	if len(vendors) != 1 {
		return fmt.Errorf("Expected one vendor dir on %s, got %d (%s)", esp, len(vendors), rustList(vendors))
	}
	return writeBootUUIDDropin(bootUUID, filepath.Join(dir, vendors[0], "bootuuid.cfg"))
}

// writeBootUUIDDropin writes the GRUB drop-in naming the boot filesystem,
// which the distro's grub.cfg sources to search for it.
func writeBootUUIDDropin(uuid, path string) error {
	if err := os.WriteFile(path, []byte(`set BOOT_UUID="`+uuid+"\"\n"), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// mountSource is the device mounted at path, from root's
// /proc/self/mounts (fstab(5) fields, octal escapes undone).
func mountSource(root, path string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(root, "/proc/self/mounts"))
	if err != nil {
		return "", fmt.Errorf("reading mount table: %w", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && filepath.Clean(blockdev.UnescapeOctal(f[1])) == filepath.Clean(path) {
			return blockdev.UnescapeOctal(f[0]), nil
		}
	}
	return "", fmt.Errorf("mountpoint %s not found", path)
}

// filesystemUUID probes dev's filesystem UUID (blkid -p: no cache, which
// can be stale after mkfs).
func filesystemUUID(ctx context.Context, r rdRunner, dev string) (string, error) {
	out, err := r.Run(ctx, "blkid", "-p", "-o", "export", dev)
	if err != nil {
		return "", fmt.Errorf("probing %s: %w", dev, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "UUID="); ok && v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("filesystem %s has no UUID", dev)
}

// colocatedESPs are the EFI System Partitions on the disks under dev (the
// disks of a RAID's members; a multipath device, not its paths), from
// lsblk as rdcore reads it (src/blockdev.rs, find_colocated_esps).
func colocatedESPs(ctx context.Context, r rdRunner, dev string) ([]string, error) {
	out, err := r.Run(ctx, "lsblk", "--pairs", "--paths", "--inverse", "--output", "NAME,TYPE", dev)
	if err != nil {
		return nil, fmt.Errorf("while looking for colocated ESPs of '%s': %w", dev, err)
	}
	var parents []string
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if i == 0 {
			continue // dev itself
		}
		kv := lsblkPairs(line)
		if kv["TYPE"] == "disk" || kv["TYPE"] == "mpath" {
			parents = append(parents, kv["NAME"])
			if kv["TYPE"] == "mpath" {
				break
			}
		}
	}
	if len(parents) == 0 {
		return nil, fmt.Errorf("while looking for colocated ESPs of '%s': no parent devices found for %s", dev, dev)
	}
	var esps []string
	for _, disk := range parents {
		out, err := r.Run(ctx, "lsblk", "--pairs", "--paths", "--output", "NAME,PARTTYPE", disk)
		if err != nil {
			return nil, fmt.Errorf("listing partitions of %s: %w", disk, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if kv := lsblkPairs(line); strings.EqualFold(kv["PARTTYPE"], espTypeGUID) {
				esps = append(esps, kv["NAME"])
			}
		}
	}
	return esps, nil
}

// lsblkPairs reads one line of lsblk --pairs: KEY="VALUE" KEY="VALUE".
func lsblkPairs(line string) map[string]string {
	kv := map[string]string{}
	for rest := strings.TrimSpace(line); rest != ""; {
		k, v, ok := strings.Cut(rest, `="`)
		if !ok {
			break
		}
		end := strings.IndexByte(v, '"')
		if end < 0 {
			break
		}
		kv[strings.TrimSpace(k)] = v[:end]
		rest = strings.TrimSpace(v[end+1:])
	}
	return kv
}

// rdEnv is what rootmap reads the storage stack with: the runner for
// lsblk, blkid, mdadm, cryptsetup, dmsetup and multipathd, and the root
// /proc/self/mounts, /sys and /dev are under ("" is /).
type rdEnv struct {
	r    rdRunner
	root string
}

// canonical is dev with every symlink resolved (/dev/mapper/root is
// /dev/dm-0).
func (e rdEnv) canonical(dev string) (string, error) {
	p, err := filepath.EvalSymlinks(filepath.Join(e.root, dev))
	if err != nil {
		return "", fmt.Errorf("canonicalizing %s: %w", dev, err)
	}
	if e.root != "" {
		p, _ = filepath.Rel(e.root, p)
		p = "/" + p
	}
	return p, nil
}

// deps are the devices dev sits on (/sys/block/NAME/slaves): none for a
// disk or a partition.
func (e rdEnv) deps(dev string) ([]string, error) {
	c, err := e.canonical(dev)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(e.root, "/sys/block", filepath.Base(c), "slaves")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading dir %s: %w", dir, err)
	}
	var out []string
	for _, ent := range ents {
		out = append(out, "/dev/"+ent.Name())
	}
	return out, nil
}

// depsRecursing is every device under dev, the lowest first.
func (e rdEnv) depsRecursing(dev string) ([]string, error) {
	deps, err := e.deps(dev)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range deps {
		below, err := e.depsRecursing(d)
		if err != nil {
			return nil, err
		}
		out = append(append(out, below...), d)
	}
	return out, nil
}

// blkType is lsblk's TYPE of dev (part, disk, raid1, crypt, mpath, …).
func (e rdEnv) blkType(ctx context.Context, dev string) (string, error) {
	out, err := e.r.Run(ctx, "lsblk", "--pairs", "--paths", "--output", "NAME,TYPE", "--nodeps", dev)
	if err != nil {
		return "", fmt.Errorf("lsblk %s: %w", dev, err)
	}
	t, ok := lsblkPairs(strings.SplitN(string(out), "\n", 2)[0])["TYPE"]
	if !ok {
		return "", fmt.Errorf("missing TYPE for %s", dev)
	}
	return t, nil
}

// output runs a command and returns its trimmed standard output.
func (e rdEnv) output(ctx context.Context, name string, args ...string) (string, error) {
	out, err := e.r.Run(ctx, name, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// isLuksIntegrity says whether dev is the dm-integrity device under a LUKS
// volume with integrity, whose LUKS header is one level further down.
func (e rdEnv) isLuksIntegrity(ctx context.Context, dev string) (bool, error) {
	c, err := e.canonical(dev)
	if err != nil || !strings.HasPrefix(filepath.Base(c), "dm-") {
		return false, err
	}
	uuid, err := e.output(ctx, "dmsetup", "info", "--columns", "--noheadings", "-o", "uuid", dev)
	if err != nil {
		return false, fmt.Errorf("checking if device %s is type LUKS integrity: %w", dev, err)
	}
	return strings.HasPrefix(uuid, "CRYPT-INTEGRITY-") || strings.HasPrefix(uuid, "CRYPT-SUBDEV-"), nil
}

// rdcoreRootmap writes the kernel arguments that find and mount the root
// filesystem, as rdcore rootmap does (coreos/coreos-installer
// src/bin/rdcore/rootmap.rs): for each device under the physical root
// (ROOT_MOUNT/sysroot), the lowest first, rd.md.uuid= for RAID,
// rd.luks.name= for LUKS (and rd.neednet=1 rd.luks.options=_netdev when
// its crypttab line says _netdev), mpath.wwid= for multipath; then root=
// (by the multipath UUID link when the root sits on multipath), rw, and
// the rootflags coreos-rootflags gives. They are appended to the newest
// BLS entry with --boot-mount or --boot-device, else printed.
func rdcoreRootmap(ctx context.Context, e rdEnv, p *flags.Parsed, stdout, stderr io.Writer) error {
	rootMount := p.Args[0]
	if _, err := mountSource(e.root, rootMount); err != nil {
		return err
	}
	device, err := mountSource(e.root, filepath.Join(rootMount, "sysroot"))
	if err != nil {
		return err
	}
	backing, err := e.depsRecursing(device)
	if err != nil {
		return err
	}
	onMultipath := false
	if len(backing) > 0 {
		t, err := e.blkType(ctx, backing[len(backing)-1])
		if err != nil {
			return err
		}
		onMultipath = t == "mpath"
	}
	var kargs []string
	for _, dev := range append(backing, device) {
		k, err := e.deviceKargs(ctx, rootMount, dev)
		if err != nil {
			return err
		}
		kargs = append(kargs, k...)
	}
	uuid, err := filesystemUUID(ctx, e.r, device)
	if err != nil {
		return err
	}
	if onMultipath {
		kargs = append(kargs, "root=/dev/disk/by-uuid/dm-mpath-"+uuid)
	} else {
		kargs = append(kargs, "root=UUID="+uuid)
	}
	// systemd-fstab-generator mounts root= read-only without it.
	kargs = append(kargs, "rw")
	rootflags, err := e.output(ctx, "coreos-rootflags", rootMount)
	if err != nil {
		return err
	}
	if rootflags != "" {
		kargs = append(kargs, "rootflags="+rootflags)
	}
	var boot string
	switch {
	case p.Has("boot-mount"):
		boot = p.String("boot-mount")
		if _, err := mountSource(e.root, boot); err != nil {
			return err
		}
	case p.Has("boot-device"):
		dev := p.String("boot-device")
		dir, err := os.MkdirTemp("", "rdcore-boot-")
		if err != nil {
			return err
		}
		defer os.Remove(dir)
		if _, err := e.r.Run(ctx, "mount", dev, dir); err != nil {
			return fmt.Errorf("mounting %s: %w", dev, err)
		}
		defer e.r.Run(context.WithoutCancel(ctx), "umount", dir)
		boot = dir
	default:
		fmt.Fprintln(stdout, strings.Join(kargs, " "))
		return nil
	}
	if _, err := install.VisitBLSOptions(boot, func(opts string) (string, bool, error) {
		next, err := install.KargsEditor{Append: kargs}.Apply(opts)
		return next, err == nil, err
	}); err != nil {
		return fmt.Errorf("appending rootmap kargs: %w", err)
	}
	fmt.Fprintf(stderr, "Injected kernel arguments into BLS: %s\n", strings.Join(kargs, " "))
	return nil
}

// deviceKargs are the kernel arguments that assemble dev in the
// initramfs: none for a disk or a partition.
func (e rdEnv) deviceKargs(ctx context.Context, rootMount, dev string) ([]string, error) {
	t, err := e.blkType(ctx, dev)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasPrefix(t, "raid") || t == "linear":
		out, err := e.output(ctx, "mdadm", "--detail", "--export", dev)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "MD_UUID="); ok {
				return []string{"rd.md.uuid=" + v}, nil
			}
		}
		return nil, fmt.Errorf("missing MD_UUID for %s", dev)
	case t == "crypt":
		if integ, err := e.isLuksIntegrity(ctx, dev); err != nil || integ {
			return nil, err
		}
		return e.luksKargs(ctx, rootMount, dev)
	case t == "mpath":
		return e.multipathKargs(ctx, dev)
	case t == "part" || t == "disk":
		return nil, nil
	}
	return nil, fmt.Errorf("unknown block device type %s", t)
}

func (e rdEnv) luksKargs(ctx context.Context, rootMount, dev string) ([]string, error) {
	uuid, err := e.luksUUID(ctx, dev)
	if err != nil {
		return nil, err
	}
	name, err := e.output(ctx, "dmsetup", "info", "--columns", "--noheadings", "-o", "name", dev)
	if err != nil {
		return nil, err
	}
	kargs := []string{"rd.luks.name=" + uuid + "=" + name}
	netdev, err := crypttabNetdev(filepath.Join(rootMount, "etc/crypttab"), name)
	if err != nil {
		return nil, err
	}
	if netdev {
		kargs = append(kargs, "rd.neednet=1", "rd.luks.options=_netdev")
	}
	return kargs, nil
}

// luksUUID is the UUID of the LUKS header under the crypt device dev:
// its one parent's, or one level further down past dm-integrity.
func (e rdEnv) luksUUID(ctx context.Context, dev string) (string, error) {
	deps, err := e.deps(dev)
	if err != nil {
		return "", err
	}
	switch len(deps) {
	case 0:
		return "", fmt.Errorf("missing parent device for %s", dev)
	case 1:
	default:
		return "", fmt.Errorf("found multiple parent devices for crypt device %s", dev)
	}
	if integ, err := e.isLuksIntegrity(ctx, deps[0]); err != nil {
		return "", err
	} else if integ {
		return e.luksUUID(ctx, deps[0])
	}
	return e.output(ctx, "cryptsetup", "luksUUID", deps[0])
}

// crypttabNetdev says whether the crypttab(5) line of the volume name has
// the _netdev option: then the initramfs needs the network to unlock it.
func crypttabNetdev(path, name string) (bool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("opening %s: %w", path, err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return false, fmt.Errorf("crypttab line missing name or device: %s", line)
		}
		if f[0] != name {
			continue
		}
		return len(f) >= 4 && slices.Contains(strings.Split(f[3], ","), "_netdev"), nil
	}
	return false, fmt.Errorf("couldn't find %s in %s", name, path)
}

// multipathKargs names the multipath device's WWID, from multipathd.
func (e rdEnv) multipathKargs(ctx context.Context, dev string) ([]string, error) {
	c, err := e.canonical(dev)
	if err != nil {
		return nil, fmt.Errorf("failed to canonicalize device path: %s: %w", dev, err)
	}
	name := filepath.Base(c)
	out, err := e.output(ctx, "multipathd", "show", "maps", "raw", "format", "%d %w")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == name {
			return []string{"mpath.wwid=" + f[1]}, nil
		}
	}
	return nil, fmt.Errorf("failed to find WWID in multipathd output for %s", name)
}
