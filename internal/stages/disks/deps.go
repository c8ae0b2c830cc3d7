package disks

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/sys"
)

// DefaultDeviceTimeout bounds the wait for the devices the config names:
// systemd's default device job timeout, which bounds Ignition's wait.
const DefaultDeviceTimeout = 90 * time.Second

// Deps is what the stage needs.
type Deps struct {
	// Config is the full config: the base configs with the user config
	// merged over them (stages.Env.Config).
	Config config.Config
	Logger *slog.Logger
	// Runner runs sfdisk, blkid, wipefs, mkfs, mdadm,
	// cryptsetup and clevis. Without udev its environment must have
	// NoUdevEnv.
	Runner  Runner
	Devices Devices
	Users   Users
	// Udev says udev runs here (blockdev.UdevRunning): the stage then
	// lets it settle before looking for devices, and triggers it after
	// changes so that /dev/disk/by-* links follow.
	Udev bool
	// UdevDB is udev's database directory ("" means blockdev.UdevDB):
	// with Udev, a device the stage waits for counts once udev has
	// processed it (blockdev.UdevProcessed). Where the directory does
	// not exist, the stage runs `udevadm settle` before looking instead.
	UdevDB string
	// UdevEvents, with Udev, is udevd spoken to without udevadm's
	// processes (sysUdev): around a partition table's write the stage
	// keeps the disk locked until udevd has seen it closed, then waits
	// for the events of the partitions it told the kernel of, and after
	// mkfs it triggers and waits for the new filesystem's event itself.
	// nil means `udevadm trigger --settle` for both.
	UdevEvents UdevEvents
	// DeviceTimeout bounds the wait for devices; 0 means
	// DefaultDeviceTimeout.
	DeviceTimeout time.Duration
	// Fetcher fetches LUKS key files and tang advertisements: the
	// engine's, with its retries, hashes and decompression.
	Fetcher Fetcher
	// AwaitNetwork says the network is being brought up (the initramfs
	// after flint-neednet started it, without waiting for it): before
	// binding a custom clevis pin that needs the network, the stage
	// waits for NetworkUp. Fetches (key files, tang advertisements) wait
	// for their server in Fetcher.
	AwaitNetwork bool
	// NetworkUp says whether an interface has an address
	// (resource.NetworkUp); nil means the network is taken as up.
	NetworkUp func() bool
	// KeepKey receives the key of each LUKS volume the files stage must
	// keep (/etc/luks/<name>), as a data URL: Stage puts it in the
	// state. A generated key that clevis replaces is not kept.
	KeepKey func(name, dataURL string)
	// Swaps lists the active swap devices' nodes; nil reads /proc/swaps.
	Swaps func() ([]string, error)
	// TempDir is where the stage's key directory goes ("" means
	// os.TempDir(), a tmpfs in the initramfs); it is removed at the end.
	TempDir string
	// Random is the source of generated LUKS keys; nil means
	// crypto/rand.
	Random io.Reader
	// DevDir is where the stage makes the links udev would, when udev
	// does not run ("" means /dev).
	DevDir string
	// OpenDisk opens a whole disk to rewrite its partition table and
	// tell the kernel about the change; nil means sys.OpenDisk.
	OpenDisk func(path string) (Disk, error)
	// ReadDisk opens a whole disk read-only, for a look at its first
	// sectors before sfdisk reads its table; nil means os.Open.
	// Read-only matters: udev re-reads the partition table of a disk
	// closed after being opened for writing.
	ReadDisk func(path string) (DiskReader, error)
	// Formatted, when not nil, is told of every filesystem the stage
	// made, with the node it made it on (possibly from several
	// goroutines at once): Stage tells systemd not to check a root made
	// in this boot (RootFormattedFlag).
	Formatted func(dev string, f config.Filesystem)
	// LoadModules loads the kernel modules of the config's filesystems
	// and LUKS volumes while the stage works (see modules). Stage
	// sets it in the initramfs, where the mount stage and the root's
	// mount would otherwise load them, in the boot's critical path.
	LoadModules bool
	// SerialMkfs runs one mkfs at a time instead of GOMAXPROCS (for the
	// benchmark, and for a machine whose disks dislike parallel writes).
	SerialMkfs bool
}

// Disk is a whole disk open for rewriting its partition table;
// *sys.Disk is the real one. Reads and writes go to the disk, Sync
// flushes them; the kernel's partitions change only through
// PartitionKernel.
type Disk interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	Sync() error
	// CloseWriter closes what writes and keeps the disk locked until
	// Close (sys.Disk.CloseWriter).
	CloseWriter() error
	PartitionKernel
}

// PartitionKernel tells the kernel about one partition at a time (the
// BLKPG ioctl). Extents are in bytes.
type PartitionKernel interface {
	AddPartition(number int, start, length int64) error
	DeletePartition(number int) error
	ResizePartition(number int, start, length int64) error
}

// UdevEvents is udevd, spoken to directly; sysUdev is the real one.
type UdevEvents interface {
	// Watch starts receiving the events udevd processes.
	Watch() (UdevWatch, error)
	// Ping returns once udevd has handled the inotify events and
	// uevents it had when called (sys.UdevPing).
	Ping(ctx context.Context) error
	// Trigger has the kernel send a "change" uevent for the block
	// device of kernel name name, tagged with uuid unless it is "".
	Trigger(name, uuid string) error
}

// UdevWatch receives the events udevd has processed since it started.
type UdevWatch interface {
	// Since is the kernel's last uevent sequence number when the watch
	// started: a uevent sent after has a larger one.
	Since() uint64
	// Next waits for the next processed event until ctx ends.
	Next(ctx context.Context) (sys.UdevEvent, error)
	Close() error
}

// sysUdev is the real UdevEvents.
type sysUdev struct{}

func (sysUdev) Watch() (UdevWatch, error) {
	m, err := sys.OpenUdevMonitor()
	if err != nil {
		return nil, err
	}
	// Read after the monitor is open: an event with a larger number is
	// seen once processed.
	n, err := sys.UeventSeqnum()
	if err != nil {
		m.Close()
		return nil, err
	}
	return sysWatch{m, n}, nil
}

func (sysUdev) Ping(ctx context.Context) error  { return sys.UdevPing(ctx) }
func (sysUdev) Trigger(name, uuid string) error { return sys.TriggerUevent(name, uuid) }

type sysWatch struct {
	*sys.UdevMonitor
	since uint64
}

func (w sysWatch) Since() uint64 { return w.since }

// DiskReader is a whole disk open for reading.
type DiskReader interface {
	io.ReaderAt
	io.Closer
}

// openReadOnly is the real Deps.ReadDisk.
func openReadOnly(path string) (DiskReader, error) {
	return os.Open(path)
}

// openSysDisk is the real Deps.OpenDisk.
func openSysDisk(path string) (Disk, error) {
	d, err := sys.OpenDisk(path)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Fetcher fetches a resource as the files stage does; the engine's
// fetcher is one.
type Fetcher interface {
	Fetch(ctx context.Context, res config.Resource, w io.Writer) error
}

type stage struct {
	Deps
	log *slog.Logger
	// swaps are the "major:minor" of the active swap areas.
	swaps map[string]bool
	// keyDir holds the LUKS key files while the stage runs.
	keyDir string
}

// op starts an operation on the stage's logger.
func (s *stage) op(name, what string) *oplog.Op {
	return oplog.Begin(s.log, name, what)
}

// command runs one command as an operation: "[started] what: argv", then
// "[finished]" or "[failed]" with the error, which carries the exit status
// and standard error.
func (s *stage) command(ctx context.Context, opName, what, name string, args ...string) ([]byte, error) {
	op := s.op(opName, what+": "+sys.QuoteArgv(append([]string{name}, args...)))
	out, err := s.Runner.Run(ctx, name, args...)
	if err != nil {
		return out, op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	op.Finish()
	return out, nil
}
