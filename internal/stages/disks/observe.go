package disks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/sys"
)

// Runner runs a command and returns its standard output; a command that
// fails returns a *sys.CommandError (argv, exit status, stderr).
// sys.Runner is the real one.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Devices is the kernel's view of block devices; blockdev.Kernel is the
// real one.
type Devices interface {
	// Resolve follows a path's symlinks to its device node; a path that
	// does not exist (yet) returns an error wrapping fs.ErrNotExist.
	Resolve(path string) (string, error)
	// Device reads a device by its canonical node.
	Device(node string) (blockdev.Device, error)
	// LogicalBlockSize is a disk's logical sector size in bytes.
	LogicalBlockSize(disk blockdev.Device) (int, error)
	// Partitions lists the partitions the kernel knows on a disk.
	Partitions(disk blockdev.Device) ([]blockdev.Device, error)
}

// Users says what uses a device; blockdev.Kernel is the real one.
type Users interface {
	// Mounts maps "major:minor" to mount points.
	Mounts() (map[string][]string, error)
	// DescribeHolder names a holder (md0, dm-0) for a person.
	DescribeHolder(name string) string
}

// pollInterval is how often a missing device is looked for again. The
// reference polls every 10 ms; devices appear within milliseconds of the
// kernel knowing them (devtmpfs), or of udev creating their symlinks.
const pollInterval = 10 * time.Millisecond

// waitForDevices resolves every path to its device node, waiting up to the
// stage's device timeout for the ones not there yet. All the paths share
// the one deadline, and every path still missing at its end is reported,
// each with how long flint waited. With udev running, a device counts once
// udev has processed it (UdevProcessed), so that its /dev/disk/by-* links
// are made and its rules have run: what systemd's .device unit waits for
// too, and Ignition waits for that unit (an array or a LUKS volume is
// waited for by its /dev/md or /dev/mapper path, which appears when it is
// ready). Not a `udevadm settle`, which waits for
// every event in udev's queue, however unrelated (on a first boot, the
// coldplug of every other device: a quarter of a second of a TCG VM's boot
// spent on the IDE controller's driver); only where udev keeps no
// database that flint can read does the stage settle first.
func (s *stage) waitForDevices(ctx context.Context, kind string, paths []string) (map[string]string, error) {
	nodes := map[string]string{}
	if len(paths) == 0 {
		return nodes, nil
	}
	op := s.op("wait", fmt.Sprintf("waiting for %s: %s", kind, strings.Join(paths, ", ")))
	var processed func(string) bool
	if s.Udev {
		db := cmp.Or(s.UdevDB, blockdev.UdevDB)
		if blockdev.UdevDBPresent(db) {
			processed = func(mm string) bool { return blockdev.UdevProcessed(db, mm) }
		} else if _, err := s.Runner.Run(ctx, "udevadm", "settle"); err != nil {
			// Not fatal: polling below still finds the devices, or
			// names the ones that never came.
			op.Log().Warn("udevadm settle failed; polling for the devices", "error", err)
		}
	}
	start := time.Now()
	deadline := start.Add(s.DeviceTimeout)
	var errs []error
	for _, p := range paths {
		if _, done := nodes[p]; done {
			continue
		}
		for {
			node, err := s.Devices.Resolve(p)
			if err == nil && processed != nil {
				err = s.checkProcessed(node, processed)
			}
			if err == nil {
				nodes[p] = node
				break
			}
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errUnprocessed) {
				errs = append(errs, fmt.Errorf("device %s: %w", p, err))
				break
			}
			if !time.Now().Before(deadline) {
				if errors.Is(err, errUnprocessed) {
					errs = append(errs, fmt.Errorf("device %s: %w: it is %s, but %w after waiting %s", p, ErrDeviceTimeout, node, err, time.Since(start).Round(time.Millisecond)))
				} else {
					errs = append(errs, fmt.Errorf("device %s: %w after waiting %s", p, ErrDeviceTimeout, time.Since(start).Round(time.Millisecond)))
				}
				break
			}
			select {
			case <-ctx.Done():
				return nil, op.Fail(fmt.Errorf("waiting for device %s: %w", p, ctx.Err()))
			case <-time.After(pollInterval):
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, op.Fail(err)
	}
	var found []string
	for _, p := range paths {
		if nodes[p] != p {
			found = append(found, p+" is "+nodes[p])
		}
	}
	if len(found) > 0 {
		op.Finish("resolved", strings.Join(found, ", "))
	} else {
		op.Finish()
	}
	return nodes, nil
}

// errUnprocessed is a device the kernel has and udev has not processed
// yet.
var errUnprocessed = errors.New("udev has not processed it")

// checkProcessed returns errUnprocessed until udev has processed node.
func (s *stage) checkProcessed(node string, processed func(string) bool) error {
	d, err := s.Devices.Device(node)
	if err != nil {
		return err
	}
	if !processed(d.MajorMinor) {
		return errUnprocessed
	}
	return nil
}

// observeDisk reads what the disk at node holds: its partition table
// (sfdisk --json, through ParseSfdiskJSON), its size and logical sector
// size as the kernel sees them, and what of it is in use (mounted, or held
// by a RAID array or a device-mapper target such as an open LUKS volume),
// so that the planner can refuse to touch it.
func (s *stage) observeDisk(ctx context.Context, node string) (DiskState, error) {
	dev, err := s.Devices.Device(node)
	if err != nil {
		return DiskState{}, fmt.Errorf("disk %s: %w", node, err)
	}
	if dev.Partition != 0 {
		return DiskState{}, fmt.Errorf("disk %s: it is partition %d of another disk, not a whole disk", node, dev.Partition)
	}
	ss, err := s.Devices.LogicalBlockSize(dev)
	if err != nil {
		return DiskState{}, fmt.Errorf("disk %s: %w", node, err)
	}

	var state DiskState
	if s.blankStart(node, ss) {
		// What sfdisk would say, without its process (a tenth of a
		// second in an emulated VM, on the common first boot's blank
		// data disk).
		s.op("observe", "reading the partition table of "+node).Finish("table", "none", "why", "its first two sectors are zeros")
	} else {
		argv := []string{"sfdisk", "--json", node}
		op := s.op("observe", "reading the partition table of "+node+": "+sys.QuoteArgv(argv))
		out, err := s.Runner.Run(ctx, argv[0], argv[1:]...)
		switch {
		case err != nil && noTable(out, err):
			op.Finish("table", "none")
		case err != nil:
			return DiskState{}, op.Fail(fmt.Errorf("disk %s: %w", node, err))
		default:
			op.Finish()
		}
		var perr error
		if state, perr = ParseSfdiskJSON(out); perr != nil {
			return DiskState{}, fmt.Errorf("disk %s: %w", node, perr)
		}
	}
	if state.LogicalSectorSize != 0 && state.LogicalSectorSize != ss {
		return DiskState{}, fmt.Errorf("disk %s: sfdisk reports %d-byte sectors, the kernel %d", node, state.LogicalSectorSize, ss)
	}
	state.Device = node
	state.LogicalSectorSize = ss
	state.Sectors = dev.Size * 512 / int64(ss)

	mounts, err := s.Users.Mounts()
	if err != nil {
		return DiskState{}, err
	}
	state.InUse = s.inUse(dev, mounts)
	parts, err := s.Devices.Partitions(dev)
	if err != nil {
		return DiskState{}, fmt.Errorf("disk %s: %w", node, err)
	}
	for _, kp := range parts {
		why := s.inUse(kp, mounts)
		if why == "" {
			continue
		}
		i := indexOf(state.Partitions, kp.Partition)
		if i < 0 {
			// The kernel still knows a partition the table no
			// longer lists, and something uses it: changing the
			// table under it is as dangerous as under the disk.
			state.InUse = joinNonEmpty(state.InUse, fmt.Sprintf("partition %d (%s), which the table no longer lists, is %s", kp.Partition, kp.Path, why))
			continue
		}
		state.Partitions[i].InUse = why
	}
	return state, nil
}

// blankStart says whether the disk's first two logical sectors are all
// zeros. Then sfdisk finds no partition table: every label libfdisk knows
// is recognized there — a DOS table's (and a GPT's protective MBR, without
// which libfdisk does not look for a GPT at all, not even its backup)
// 0x55AA in sector 0, a Sun or SGI label's magic in sector 0, a BSD
// label's in sector 1 (util-linux libfdisk/src/{dos,gpt,sun,sgi,bsd}.c).
// A disk that cannot be read this way is left to sfdisk.
func (s *stage) blankStart(node string, ss int) bool {
	open := s.ReadDisk
	if open == nil {
		open = openReadOnly
	}
	d, err := open(node)
	if err != nil {
		return false
	}
	defer d.Close()
	b := make([]byte, 2*ss)
	if _, err := d.ReadAt(b, 0); err != nil {
		return false
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// noTable tells sfdisk's answer for a disk without a partition table
// (nothing on stdout, exit status 1, and its message) from its failures.
func noTable(out []byte, err error) bool {
	var ce *sys.CommandError
	return errors.As(err, &ce) && ce.ExitCode == 1 && len(strings.TrimSpace(string(out))) == 0 &&
		strings.Contains(ce.Stderr, "does not contain a recognized partition table")
}

// inUse says why a device is busy, or "".
func (s *stage) inUse(d blockdev.Device, mounts map[string][]string) string {
	var why []string
	if mp := mounts[d.MajorMinor]; len(mp) > 0 {
		why = append(why, "mounted at "+strings.Join(mp, ", "))
	}
	if s.swaps[d.MajorMinor] {
		why = append(why, "an active swap area")
	}
	for _, h := range d.Holders {
		why = append(why, "held by "+s.Users.DescribeHolder(h))
	}
	return strings.Join(why, "; ")
}

func indexOf(parts []PartitionState, n int) int {
	for i, p := range parts {
		if p.Number == n {
			return i
		}
	}
	return -1
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
