// Package stages is the contract between the engine and the stages: what
// every stage gets for one run (Env: the config, the logger, the target
// root, the fetcher, a command runner, the state, the kernel command line)
// and the one method every stage implements (Stage). It is not a stage
// itself; the stages are the packages under it, and the
// engine lists them, in boot order, as a table of {name, Stage}.
//
// The engine owns what all stages share (logging and timing the stage, the
// "stage <name>:" error prefix, reading and writing the state file, making
// the fetcher, reading the kernel command line once per process); a stage
// owns everything else it does, down to the flags it leaves under /run.
//
// Family: boot stages (internal/README.md).
package stages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/sys"
)

// ErrSetup means a stage could not get ready to run (the state file, the
// fetcher, a platform without a provider): exit status 3, as in Ignition.
var ErrSetup = errors.New("setup failed")

// Stage is one provisioning stage. Run does the stage's work with what e
// holds; it may change e.Config (the fetch stages set it) and e.State,
// which the engine saves when Run returns nil.
type Stage interface {
	Run(ctx context.Context, e *Env) error
}

// Env is what the engine hands every stage for one run.
type Env struct {
	// Config is the full config the stage runs with: the base configs
	// with the user config merged over them. The fetch stages fill it
	// (fetch.Stage); the later stages get it from the cache
	// (fetch.FromCache).
	Config config.Config
	// Cache, when not nil, is the config cache (Files.ConfigCache) as
	// the engine read and parsed it before the stage, for the
	// first-boot stamp's check: fetch.FromCache takes it instead of
	// reading and parsing the file again.
	Cache *config.Config
	// Logger has the stage's name as its stage attribute.
	Logger *slog.Logger
	// Root is the target root the later stages write under.
	Root string
	// Fetcher is the stage's fetcher: offline in fetch-offline.
	Fetcher Fetcher
	// Runner runs commands, their argv logged at debug level; a stage
	// that runs commands with secrets in their argv drops its Logger.
	Runner sys.Runner
	// State is what one stage leaves for the next; the engine loads it
	// before Run and saves it after a Run that succeeded.
	State *State
	// Cmdline is the kernel command line, read once per process.
	Cmdline Cmdline
	// Files are Ignition's files under /run.
	Files Files
	// Offline says the stage must not use the network (fetch-offline):
	// its fetcher refuses it, and needing it is an answer, not a failure.
	Offline bool
	// Initramfs says flint runs in the initramfs (/etc/initrd-release
	// exists): only there does a stage reboot or load modules.
	Initramfs bool
	// NetworkComingUp says the network is being brought up under the
	// stage: in the initramfs, once fetch-offline left the neednet flag
	// for flint-neednet, which starts the network without waiting for it.
	NetworkComingUp bool
}

// Files are the files the stages share under /run, Ignition's paths by
// default (coreos/ignition internal/main.go).
type Files struct {
	// ConfigCache is the rendered user config the fetch stages write
	// and the later stages read.
	ConfigCache string
	// StateFile is the state; the flags the stages leave go beside it
	// (Flag).
	StateFile string
	// NeedNet is the flag fetch-offline writes when the network is
	// needed.
	NeedNet string
}

// Flag returns the path of the flag file name beside the state file
// (/run/ignition/<name>): the flags the stages leave for the units and
// the generator that come after them.
func (f Files) Flag(name string) string {
	return filepath.Join(filepath.Dir(f.StateFile), name)
}

// WriteFlag creates the empty flag file at path, and its directory.
func WriteFlag(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("flag %s: %w", path, err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return fmt.Errorf("flag %s: %w", path, err)
	}
	return nil
}

// Cmdline is the kernel command line as the engine read it: its
// arguments, or why it could not be read.
type Cmdline struct {
	Args platform.Cmdline
	// Err is why the command line could not be read; a stage that
	// needs it reports it, one that only tunes itself with it ignores it.
	Err error
}

// Fetcher is what the stages need of *resource.Fetcher.
type Fetcher interface {
	Configure(ctx context.Context, ign config.Ignition) error
	SetTotalTimeout(d time.Duration)
	SetConfigLimit(n int64)
	Fetch(ctx context.Context, res config.Resource, w io.Writer) error
	FetchConfig(ctx context.Context, res config.Resource) ([]byte, error)
	CABundle(ctx context.Context, ca config.Resource) ([]byte, error)
	Get(ctx context.Context, r resource.Request) ([]byte, error)
}
