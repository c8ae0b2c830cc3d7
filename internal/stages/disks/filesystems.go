package disks

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/sys"
)

// blockFilesystems are the config's filesystems that live on a block
// device: a format is set and is not virtiofs (whose device is a tag).
func blockFilesystems(fss []config.Filesystem) []config.Filesystem {
	var out []config.Filesystem
	for _, f := range fss {
		if format := deref(f.Format); format != "" && format != "virtiofs" {
			out = append(out, f)
		}
	}
	return out
}

// Probed is what blkid finds on a device: its filesystem (or other
// signature: swap, a RAID member, LUKS) type, UUID and label. An empty
// Type means no signature.
type Probed struct {
	Type, UUID, Label string
}

// probe runs `blkid -p -o export <dev>`: a low-level probe of the device
// itself, never blkid's cache. blkid exits 2 when it finds nothing. With
// more than one signature ("ambivalent", exit 8) Ignition takes the
// first one it finds and warns; blkid's command line cannot, so flint
// lists the signatures with `wipefs -n -J` and takes the first that is not
// a partition table.
func (s *stage) probe(ctx context.Context, dev string) (Probed, error) {
	out, err := s.Runner.Run(ctx, "blkid", "-p", "-o", "export", dev)
	var ce *sys.CommandError
	switch {
	case err == nil:
		return parseBlkidExport(out), nil
	case errors.As(err, &ce) && ce.ExitCode == 2:
		return Probed{}, nil
	case errors.As(err, &ce) && ce.ExitCode == 8:
		out, werr := s.Runner.Run(ctx, "wipefs", "-n", "-J", dev)
		if werr != nil {
			return Probed{}, fmt.Errorf("probing %s: %w (and listing its signatures: %w)", dev, err, werr)
		}
		p, all, werr := parseWipefsJSON(out)
		if werr != nil {
			return Probed{}, fmt.Errorf("probing %s: %w", dev, werr)
		}
		s.log.Warn("device "+dev+" holds more than one signature; going by the first", "op", "filesystem", "signatures", strings.Join(all, ", "), "type", p.Type)
		return p, nil
	}
	return Probed{}, fmt.Errorf("probing %s: %w", dev, err)
}

// parseBlkidExport reads blkid's KEY=value lines. Partition-table and
// partition-entry keys (PTTYPE, PART_ENTRY_*) are not the device's
// contents and are ignored, as Ignition's superblock-only probe does.
func parseBlkidExport(out []byte) Probed {
	var p Probed
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "TYPE":
			p.Type = v
		case "UUID":
			p.UUID = v
		case "LABEL":
			p.Label = v
		}
	}
	return p
}

// partitionTables are the wipefs signature types that are partition
// tables, not a device's contents.
var partitionTables = map[string]bool{"gpt": true, "PMBR": true, "dos": true, "atari": true, "bsd": true, "mac": true, "sgi": true, "sun": true, "solaris": true, "unixware": true, "minix": true, "ultrix": true}

// parseWipefsJSON reads `wipefs -n -J`: the first signature that is not a
// partition table, and every signature type, in the order wipefs lists
// them.
func parseWipefsJSON(out []byte) (Probed, []string, error) {
	var doc struct {
		Signatures []struct {
			Type  string  `json:"type"`
			UUID  *string `json:"uuid"`
			Label *string `json:"label"`
		} `json:"signatures"`
	}
	if len(strings.TrimSpace(string(out))) == 0 {
		return Probed{}, nil, nil
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return Probed{}, nil, fmt.Errorf("wipefs -J output: %w", err)
	}
	var p Probed
	var all []string
	for _, sig := range doc.Signatures {
		all = append(all, sig.Type)
		if p.Type == "" && !partitionTables[sig.Type] {
			p = Probed{Type: sig.Type, UUID: deref(sig.UUID), Label: deref(sig.Label)}
		}
	}
	return p, all, nil
}

// reuse decides, as Ignition does ("Filesystem-Reuse Semantics" in
// coreos/ignition docs/operator-notes.md), whether the filesystem on the
// device is the one the config describes: with wipeFilesystem false, a
// filesystem of the config's format ("none" is no filesystem), whose label
// and UUID equal the config's where the config sets them (UUIDs ignoring
// case, and the dash of a vfat volume id), is kept. With wipeFilesystem
// false, any other filesystem is an error: flint will not destroy data the
// config does not let it destroy. Otherwise the filesystem is created.
func reuse(f config.Filesystem, p Probed) (keep bool, err error) {
	if isTrue(f.WipeFilesystem) {
		return false, nil
	}
	format := deref(f.Format)
	typ := p.Type
	if format == "none" {
		format = ""
	}
	if typ == format &&
		(f.Label == nil || *f.Label == p.Label) &&
		(f.UUID == nil || canonicalUUID(format, *f.UUID) == canonicalUUID(format, p.UUID)) {
		return true, nil
	}
	if p.Type == "" {
		return false, nil
	}
	var found []string
	found = append(found, "type "+p.Type)
	if p.Label != "" {
		found = append(found, fmt.Sprintf("label %q", p.Label))
	}
	if p.UUID != "" {
		found = append(found, "UUID "+p.UUID)
	}
	return false, fmt.Errorf("filesystem on %s %w (it holds %s); set wipeFilesystem: true to replace it",
		f.Device, ErrFilesystemMismatch, strings.Join(found, ", "))
}

// canonicalUUID is a UUID as mkfs takes it and as the reuse rule compares
// it: lower case, and for vfat (a 32-bit volume id blkid prints as
// ABCD-1234) without the dash.
func canonicalUUID(format, uuid string) string {
	uuid = strings.ToLower(uuid)
	if format == "vfat" {
		uuid = strings.ReplaceAll(uuid, "-", "")
	}
	return uuid
}

// mkfsArgv is the command that creates the filesystem, exactly as the
// reference runs it (coreos/ignition
// internal/exec/stages/disks/filesystems.go): the config's options first,
// then the force flag, UUID and label, then the device; nil for "none".
func mkfsArgv(f config.Filesystem, dev string) []string {
	format := deref(f.Format)
	var argv []string
	uuid := func(flag string) {
		if f.UUID != nil {
			argv = append(argv, flag, canonicalUUID(format, *f.UUID))
		}
	}
	label := func(flag string) {
		if f.Label != nil {
			argv = append(argv, flag, *f.Label)
		}
	}
	switch format {
	case "ext4":
		argv = append(append([]string{"mkfs.ext4"}, f.Options...), "-F")
		uuid("-U")
		label("-L")
	case "btrfs":
		argv = append(append([]string{"mkfs.btrfs"}, f.Options...), "--force")
		uuid("-U")
		label("-L")
	case "xfs":
		argv = append(append([]string{"mkfs.xfs"}, f.Options...), "-f")
		if f.UUID != nil {
			argv = append(argv, "-m", "uuid="+canonicalUUID(format, *f.UUID))
		}
		label("-L")
	case "swap":
		argv = append(append([]string{"mkswap"}, f.Options...), "-f")
		uuid("-U")
		label("-L")
	case "vfat":
		// mkfs.fat has no force flag: it always overwrites.
		argv = append([]string{"mkfs.fat"}, f.Options...)
		uuid("-i")
		label("-n")
	default:
		return nil
	}
	return append(argv, dev)
}

// fsJob is one filesystem to create.
type fsJob struct {
	fs  config.Filesystem
	dev string // the resolved node
}

// decideFilesystems probes every filesystem's device and applies the reuse
// rule to each. It returns the ones to create, and every mismatch at once;
// nothing is written.
func (s *stage) decideFilesystems(ctx context.Context, fss []config.Filesystem, nodes map[string]string) ([]fsJob, error) {
	var jobs []fsJob
	var errs []error
	for _, f := range fss {
		dev := nodes[f.Device]
		if isTrue(f.WipeFilesystem) {
			// Whatever the device holds, it goes: the reuse rule
			// reads no probe, and wipefs -a (createFilesystem) names
			// each signature it erases, so a blkid run here would
			// only delay the boot (a process start, 0.1 s in a TCG
			// guest). Ignition probes first in-process, with libblkid
			// (internal/exec/stages/disks/filesystems.go), where it
			// costs nothing.
			s.op("filesystem", fmt.Sprintf("deciding the %s filesystem on %s", deref(f.Format), f.Device)).
				Finish("decision", "create: wipeFilesystem is true")
			jobs = append(jobs, fsJob{fs: f, dev: dev})
			continue
		}
		op := s.op("filesystem", fmt.Sprintf("probing %s for the %s filesystem: blkid -p -o export %s", f.Device, deref(f.Format), dev))
		p, err := s.probe(ctx, dev)
		if err != nil {
			errs = append(errs, op.Fail(err))
			continue
		}
		keep, err := reuse(f, p)
		switch {
		case err != nil:
			errs = append(errs, op.Fail(err))
		case keep:
			op.Finish("found", p.Describe(), "decision", "keep: it matches the config")
		default:
			why := "create: the device holds no filesystem"
			if isTrue(f.WipeFilesystem) {
				why = "create: wipeFilesystem is true"
			}
			op.Finish("found", p.Describe(), "decision", why)
			jobs = append(jobs, fsJob{fs: f, dev: dev})
		}
	}
	return jobs, errors.Join(errs...)
}

// Describe says what a probe found, for a person: "nothing", or the
// type, label and UUID (flint plan's output and the stage's log).
func (p Probed) Describe() string {
	if p.Type == "" {
		return "nothing"
	}
	s := p.Type
	if p.Label != "" {
		s += fmt.Sprintf(" label %q", p.Label)
	}
	if p.UUID != "" {
		s += " UUID " + p.UUID
	}
	return s
}

// createFilesystems wipes and formats each job's device, in parallel up
// to GOMAXPROCS runs at a time (Ignition does the same) or one at a
// time when the stage is told to. Every failure is reported, in config
// order.
func (s *stage) createFilesystems(ctx context.Context, jobs []fsJob) error {
	workers := runtime.GOMAXPROCS(0)
	if s.SerialMkfs {
		workers = 1
	}
	errs := make([]error, len(jobs))
	// Workers take the jobs in config order, so a serial run is in
	// config order too.
	next := make(chan int, len(jobs))
	for i := range jobs {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = s.createFilesystem(ctx, jobs[i])
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// createFilesystem erases every signature on the device (wipefs -a), then
// runs mkfs; a "none" filesystem stops after the wipe.
func (s *stage) createFilesystem(ctx context.Context, j fsJob) error {
	format := deref(j.fs.Format)
	out, err := s.command(ctx, "filesystem", "wiping "+j.fs.Device, "wipefs", "-a", j.dev)
	if err != nil {
		return fmt.Errorf("filesystem on %s: %w", j.fs.Device, err)
	}
	// wipefs prints a line per signature erased ("… bytes were erased at
	// offset … (ext4): …"): with wipeFilesystem the stage's only record
	// of what the device held.
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" {
			s.log.Info("erased", "op", "filesystem", "device", j.fs.Device, "signature", line)
		}
	}
	argv := mkfsArgv(j.fs, j.dev)
	if argv == nil {
		return nil
	}
	if _, err := s.command(ctx, "filesystem", fmt.Sprintf("creating the %s filesystem on %s", format, j.fs.Device), argv[0], argv[1:]...); err != nil {
		return fmt.Errorf("filesystem on %s: %w", j.fs.Device, err)
	}
	if s.Formatted != nil {
		s.Formatted(j.dev, j.fs)
	}
	if s.Udev {
		// Ignition triggers a tagged event so that udev's by-label
		// and by-uuid links follow the new filesystem (btrfs flaps).
		s.settleFilesystem(ctx, j.dev)
	}
	return nil
}

// settleFilesystem has udev process a change event of dev and waits for
// it, as `udevadm trigger --settle dev` does (a UUID in the event, the
// processed event with that UUID waited for), without its process; where
// it cannot, it runs that command.
func (s *stage) settleFilesystem(ctx context.Context, dev string) {
	if s.UdevEvents == nil {
		s.triggerSettle(ctx, "filesystem", dev)
		return
	}
	err := func() error {
		d, err := s.Devices.Device(dev)
		if err != nil {
			return err
		}
		u, err := uuid.NewRandom()
		if err != nil {
			return err
		}
		w, err := s.UdevEvents.Watch()
		if err != nil {
			return err
		}
		defer w.Close()
		if err := s.UdevEvents.Trigger(d.Name, u.String()); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, s.DeviceTimeout)
		defer cancel()
		for {
			ev, err := w.Next(wctx)
			if err != nil {
				return fmt.Errorf("waiting for the change event of %s: %w", dev, err)
			}
			if ev.SynthUUID == u.String() {
				return nil
			}
		}
	}()
	if err != nil {
		s.log.Warn("waiting for udev failed; settling with udevadm instead", "op", "filesystem", "device", dev, "error", err)
		s.triggerSettle(ctx, "filesystem", dev)
	}
}
