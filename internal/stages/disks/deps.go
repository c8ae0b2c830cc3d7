package disks

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/sys"
)

// DefaultDeviceTimeout bounds the wait for the devices the config names:
// systemd's default device job timeout, which bounds the reference's wait.
const DefaultDeviceTimeout = 90 * time.Second

// Deps is what the stage needs.
type Deps struct {
	// Config is the full config the engine rendered.
	Config config.Config
	Logger *slog.Logger
	// Runner runs sfdisk, sgdisk, partx, blkid, wipefs and mkfs.
	Runner  Runner
	Devices Devices
	Users   Users
	// Udev says udev runs here (blockdev.UdevRunning): the stage then
	// lets it settle before looking for devices, and triggers it after
	// changes so that /dev/disk/by-* links follow.
	Udev bool
	// DeviceTimeout bounds the wait for devices; 0 means
	// DefaultDeviceTimeout.
	DeviceTimeout time.Duration
	// SerialMkfs runs one mkfs at a time instead of GOMAXPROCS (for the
	// benchmark, and for a machine whose disks dislike parallel writes).
	SerialMkfs bool
}

type stage struct {
	Deps
	log *slog.Logger
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
