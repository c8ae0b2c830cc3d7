package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/passwd"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/rootfs"
	"github.com/flintboot/flint/internal/sys"
)

// DefaultParallel is how many remote contents are fetched at once, all
// servers together, and DefaultPerHost how many from one server (host and
// port): a fetch is mostly waiting for a round trip, so enough requests
// are in flight to hide a slow server's latency (100 files 50 ms away
// take three rounds instead of thirteen at 8), few enough per server not
// to swamp it, and each keeps its HTTP/1.1 connection for the next one
// (the resource package keeps as many idle per host: see
// resource.IdleConnsPerHost). Each fetch in flight holds a temporary
// file, its directory and a copy buffer: 64 of them take about 2 MiB.
const (
	DefaultParallel = 64
	DefaultPerHost  = resource.IdleConnsPerHost
)

// SSHKeysMessageID is the journal MESSAGE_ID of the entry saying a user's
// SSH keys were written: Ignition's, which distros' console helpers
// look up with IGNITION_USER_NAME and IGNITION_PATH (coreos/ignition
// internal/exec/util/passwd.go).
const SSHKeysMessageID = "225067b87bbd4a0cb6ab151f82fa364b"

// ResultPath is where the result file goes, inside the root (coreos/ignition
// internal/exec/stages/files/filesystemEntries.go, createResultFile): distro
// tools read it to tell a provisioned machine.
const ResultPath = "/etc/.ignition-result.json"

// Fetcher fetches a resource's contents, decompressed and verified, into
// w (*resource.Fetcher).
type Fetcher interface {
	Fetch(ctx context.Context, res config.Resource, w io.Writer) error
}

// Runner runs a command and returns its standard output (sys.Runner). It
// must not log argv itself: the stage logs them with password hashes
// redacted.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Deps is what the stage needs.
type Deps struct {
	// Config is the full config: the base configs with the user config
	// merged over them (stages.Env.Config).
	Config config.Config
	Logger *slog.Logger
	// Root is the target root directory (/sysroot in the initramfs).
	Root    string
	Fetcher Fetcher
	// Runner runs the shadow tools, cryptsetup, systemctl, setfiles and
	// is-live-image.
	Runner Runner
	// LuksKeys maps a LUKS volume's name to its key as a data URL, as the
	// disks stage left them in the state; the stage writes them to
	// /etc/luks/<name>.
	LuksKeys map[string]string
	// NotatedDirectories are the mountpoints the mount stage created,
	// relative to the root: those under a user's home are given to the
	// user.
	NotatedDirectories []string
	// UserConfigProvided says a user config (not only base configs) was
	// found, for the result file.
	UserConfigProvided bool
	// BootID reads the current boot's id; nil reads
	// /proc/sys/kernel/random/boot_id.
	BootID func() (string, error)
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Parallel bounds concurrent remote fetches; 0 means DefaultParallel.
	Parallel int
	// PerHost bounds concurrent remote fetches from one host; 0 means
	// DefaultPerHost. Parallel bounds it too.
	PerHost int
	// AuthorizedKeysFile writes the config's SSH keys into
	// ~/.ssh/authorized_keys, keeping the lines already there, instead
	// of the fragment ~/.ssh/authorized_keys.d/ignition: for a distro
	// whose sshd reads no authorized_keys.d (Ignition's build setting
	// writeAuthorizedKeysFragment=false, internal/distro/distro.go).
	AuthorizedKeysFile bool
	// InterruptedStage is the stage an earlier first boot died in
	// (stages.State.InterruptedStage), for the result file.
	InterruptedStage string
	// NoResult skips the result file: `flint apply` provisions a root
	// that has not booted, and writes only what the config says.
	NoResult bool
	// Progress remembers the entries applied, for a run after a crash;
	// nil remembers nothing.
	Progress Progress

	// prefetchBudget replaces PrefetchBudget (tests); negative fetches
	// nothing ahead.
	prefetchBudget int64
}

type stage struct {
	Deps
	log  *slog.Logger
	root *rootfs.Root
	db   *passwd.DB
	// uid and gid own what the stage creates unless the config says
	// otherwise: root in the initramfs.
	uid, gid int
	// relabel lists the real paths (inside the root) to relabel.
	relabel []string
	// selinux says relabelling is wanted: the target has SELinux enabled.
	selinux bool
	// fileContexts is the policy's file_contexts, inside the root.
	fileContexts string
	// appends maps each file AppendJournal records to the SHA-256 of
	// its contents (nil until read).
	appends map[string]string
	// inPlace says files with contents from the config are made with no
	// name and linked to theirs when nothing is there
	// (rootfs.Loc.CreateNew): a first boot's root. Apply and `flint
	// apply` (NoResult) write through named temporary files and renames
	// as they always did.
	inPlace bool
	// flush writes the root back while the stage writes (nil: not
	// started).
	flush *flusher
	// written maps the config path of each file the stage wrote to what
	// it left there, for the manifest (nil: nothing kept).
	written map[string]writtenFile
	// slots bound the fetches in flight (Parallel, PerHost).
	slots *fetchSlots
	// prefetch holds the remote contents fetched while the shadow tools
	// run (nil: none).
	prefetch *prefetcher
}

// writtenFile is a file as the stage left it: the node, and the SHA-256
// of its contents.
type writtenFile struct {
	info rootfs.Info
	sum  [32]byte
}

// op starts an operation on the stage's logger.
func (s *stage) op(name, what string) *oplog.Op {
	return oplog.Begin(s.log, name, what)
}

// quick starts an operation that logs only its outcome: a node whose
// contents need no fetch is one [finished] or [failed] line.
func (s *stage) quick(name, what string) *oplog.Op {
	return oplog.Quick(s.log, name, what)
}

// command runs argv as an operation, logging it with password hashes
// redacted; its error carries the redacted argv, exit status and standard
// error.
func (s *stage) command(ctx context.Context, opName, what string, argv []string) ([]byte, error) {
	shown := sys.QuoteArgv(passwd.Redact(argv))
	op := s.op(opName, what+": "+shown)
	out, err := s.Runner.Run(ctx, argv[0], argv[1:]...)
	if err != nil {
		// The runner's error quotes the argv; replace it with the
		// redacted one so no hash reaches the log.
		var ce *sys.CommandError
		if errors.As(err, &ce) {
			red := *ce
			red.Argv = passwd.Redact(ce.Argv)
			err = &red
		} else if strings.Contains(err.Error(), "--password") {
			err = fmt.Errorf("%s failed", shown)
		}
		return out, op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	op.Finish()
	return out, nil
}

func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
