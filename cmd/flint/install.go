package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"

	"github.com/flintboot/flint/internal/install"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/stream"
	"github.com/flintboot/flint/internal/sys"
)

const installUsage = `usage: flint install [OPTIONS] DEST

  -i, --ignition-file FILE     config for the installed system (validated first)
  -I, --ignition-url URL       config URL (http needs --ignition-hash or --insecure-ignition)
      --ignition-hash DIGEST   sha256-HEX or sha512-HEX of the config
  -f, --image-file FILE        OS image: raw, gzip, xz or zstd
  -u, --image-url URL          OS image URL
  -s, --stream NAME            the metal image of a Fedora CoreOS stream (4Kn on 4096-byte sectors)
  -a, --architecture NAME      the stream image's architecture (default this machine's)
      --stream-base-url URL    stream metadata base (default ` + stream.DefaultBaseURL + `)
      --image-sig FILE|URL     detached OpenPGP signature (default IMAGE.sig)
      --keyring FILE           keys for the signature (default ` + install.DefaultKeyring + `)
      --image-hash DIGEST      sha256-HEX or sha512-HEX of the image file
      --insecure               write an image with neither signature nor hash
      --save-partlabel GLOB    keep partitions whose label matches
      --save-partindex N|M-N   keep partitions by number
  -p, --platform ID            platform ID for the installed system
      --console SPEC           kernel and GRUB console (tty0, ttyS0,115200n8)
      --append-karg ARG        append a kernel argument
      --delete-karg ARG        delete a kernel argument
      --firstboot-args ARGS    kernel arguments for the first boot only
  -n, --copy-network           copy NetworkManager keyfiles (--network-dir)
      --fetch-retries N        retries of a failed download (or infinite)
      --preserve-on-error      leave the partition table of a failed write
  -c, --config-file FILE       YAML options, keys are the long option names
      --from-cmdline           install as the kernel command line says (coreos.inst.*)
See docs/install.md.`

// runInstall writes an OS image and its config to a disk. Logs and
// progress go to stderr.
func runInstall(ctx context.Context, args []string, stderr io.Writer) error {
	if isLiveInstall(args) {
		return runLiveInstall(ctx, args, stderr, defaultLiveOptions())
	}
	o, err := install.ParseArgs(args, nil)
	if err != nil {
		return usageError{fmt.Sprintf("install: %v\n\n%s", err, installUsage)}
	}
	return runInstallOptions(ctx, o, stderr)
}

// runInstallOptions writes the image and config o names: flint install's
// work once its command line is read, and coreos-installer install's.
func runInstallOptions(ctx context.Context, o install.Options, stderr io.Writer) error {
	log := slog.New(oplog.NewTextHandler(stderr, slog.LevelInfo))
	deps := install.Deps{
		Log:      log,
		Target:   install.NewTarget(sys.Mounter{}),
		Proxy:    install.ProxyFromEnv(os.Getenv),
		Progress: stderr,
		Terminal: install.IsTerminal(stderr),
	}
	// The system's xz decodes twice as fast as the Go decoder; a live
	// environment has it more often than not (docs/install.md).
	if xzPath, err := exec.LookPath("xz"); err == nil {
		deps.XZ = func(in io.Reader) (io.ReadCloser, error) {
			return sys.Runner{}.Filter(ctx, in, xzPath, "-dc")
		}
	}
	err := install.Run(ctx, o, deps)
	var ce *install.ConfigError
	if errors.As(err, &ce) {
		for _, e := range ce.Report.Entries {
			fmt.Fprintf(stderr, "%s: %s\n", ce.Source, e)
		}
		fmt.Fprintf(stderr, "flint install: config %s is invalid; the disk was not touched\n", ce.Source)
		return errFailed
	}
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	return nil
}
