package install

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/sys"
)

// Target is the destination disk's side of an install: the checks and
// the device work that need the kernel (target_linux.go), behind an
// interface so the whole flow runs in tests against a regular file.
type Target interface {
	// Open checks that dest is a whole disk nobody uses (not mounted,
	// not swap, not held, not the running system's) and opens it for
	// writing, exclusively.
	Open(dest string) (Disk, geometry, error)
	// Reread tells the kernel the partition table changed.
	Reread(d Disk) error
	// Share gives up the exclusive open once the image is written, so
	// the boot partition can be mounted: it returns the disk opened
	// again without O_EXCL, and closes d.
	Share(d Disk) (Disk, error)
	// MountBoot mounts the written disk's filesystem labelled "boot" and
	// returns where, and how to unmount it.
	MountBoot(ctx context.Context, dest string, d Disk) (string, func() error, error)
}

// Deps are what an install needs from outside.
type Deps struct {
	Log    *slog.Logger
	Target Target
	// Proxy is the proxy for http(s) downloads, as the environment's
	// HTTP_PROXY, HTTPS_PROXY and NO_PROXY give it (ProxyFromEnv); the
	// zero value connects directly.
	Proxy config.Proxy
	// Backoff is the first wait before a retried download (1 s if 0).
	Backoff time.Duration
	// Progress receives the progress reports (nil: none); Terminal says
	// it is a terminal, where one line is redrawn in place.
	Progress         io.Writer
	Terminal         bool
	ProgressInterval time.Duration
	// Commands runs gpg to check image signatures; nil is sys.Runner.
	Commands Commands
	// XZ, when not nil, decodes xz images: the system's xz (liblzma)
	// decodes about twice as fast as the Go decoder, which is used
	// without it.
	XZ resource.Decoder
}

// ConfigError is a config the validator rejected, with its report.
type ConfigError struct {
	Source string
	Report config.Report
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("config %s: %v", e.Source, ErrInvalidConfig)
}

func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// Run installs: the config is fetched and validated, the image's
// signature and keyring are read, the disk is checked, then the image is
// written and verified and the boot filesystem edited. Nothing touches the
// disk before the config is known valid and the disk known free; a local
// image file is verified whole before the disk is touched.
func Run(ctx context.Context, o Options, d Deps) error {
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f, err := newFetcher(ctx, log, o.FetchRetries, d.Backoff, d.Proxy)
	if err != nil {
		return err
	}

	cfg, warnings, err := loadConfig(ctx, o, f)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		log.Warn("config: " + w.String())
	}

	if o.Stream != "" {
		if err := resolveStream(ctx, &o, d, f, log); err != nil {
			return err
		}
	}
	cmds := d.Commands
	if cmds == nil {
		cmds = sys.Runner{Logger: log}
	}
	digest, home, err := integrity(ctx, o, f, cmds, log)
	if err != nil {
		return err
	}
	if home != nil {
		defer home.Close()
	}
	if o.ImageFile != "" && (digest != nil || home != nil) {
		// A local file is checked before the disk is touched, and again
		// as it is written (it could change in between).
		if err := verifyFile(ctx, o.ImageFile, digest, home); err != nil {
			return err
		}
		log.Info("image verified", "file", o.ImageFile)
	}
	filters, err := ParseFilters(o.SaveLabels, o.SaveIndexes)
	if err != nil {
		return err
	}

	disk, g, err := d.Target.Open(o.Dest)
	if err != nil {
		return err
	}
	defer func() {
		if c, ok := disk.(io.Closer); ok {
			c.Close()
		}
	}()
	saved, err := selectSaved(disk, g, filters)
	if err != nil {
		return fmt.Errorf("saving partitions of %s: %w", o.Dest, err)
	}
	if len(saved.Parts) > 0 {
		// Restoring them into a scratch table first proves they can be
		// written back (coreos-installer's dry run in SavedPartitions::new).
		if err := saved.overwrite(discardAt{}, g.sectors(), uuid.Nil); err != nil {
			return fmt.Errorf("saved partitions of %s cannot be written back: %w", o.Dest, err)
		}
	}
	var guid uuid.UUID
	rand.Read(guid[:])
	guid[6] = guid[6]&0x0f | 0x40 // a version 4 GUID (RFC 9562, 5.4)
	guid[8] = guid[8]&0x3f | 0x80

	res, err := writeDisk(ctx, o, d, f, &disk, g, saved, guid, digest, home, cfg)
	if err == nil {
		log.Info("install complete", "dest", o.Dest)
		return nil
	}
	log.Error("install failed", "dest", o.Dest, "err", err)
	if !res.Touched {
		log.Info("the disk was not written to", "dest", o.Dest)
		return err
	}
	if o.PreserveOnError {
		log.Warn("leaving the partition table as it is (--preserve-on-error)", "dest", o.Dest)
		return err
	}
	log.Info("clearing the partition table", "dest", o.Dest)
	var cerr error
	if len(saved.Parts) > 0 {
		cerr = clearTable(disk, g, res.ImageTable)
		cerr = errors.Join(cerr, saved.overwrite(disk, g.sectors(), guid))
	} else {
		cerr = clearTable(disk, g, res.ImageTable)
	}
	cerr = errors.Join(cerr, disk.Sync())
	if cerr == nil {
		cerr = d.Target.Reread(disk)
	}
	if cerr != nil {
		return errors.Join(err, fmt.Errorf("clearing the partition table of %s: %w", o.Dest, cerr))
	}
	return err
}

// discardAt is a WriterAt that keeps nothing.
type discardAt struct{}

func (discardAt) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }

// writeDisk streams, verifies and writes the image, then edits the boot
// filesystem.
func writeDisk(ctx context.Context, o Options, d Deps, f fetcher, diskp *Disk, g geometry, saved savedSet, guid uuid.UUID,
	digest *Digest, home *gpgHome, cfg []byte) (writeResult, error) {
	log := f.log
	disk := *diskp
	body, size, err := f.openImage(ctx, o)
	if err != nil {
		return writeResult{}, err
	}
	defer body.Close()
	v, err := newVerifier(ctx, digest, home)
	if err != nil {
		return writeResult{}, err
	}
	defer v.Abort()
	p := startProgress(d.Progress, d.Terminal, size, cmpDur(d.ProgressInterval, 5*time.Second))
	raw := io.TeeReader(countingReader{body, p}, v)
	image, format, closeDec, err := decompressor(raw, d.XZ)
	if err != nil {
		p.finish()
		return writeResult{}, err
	}
	defer closeDec()
	log.Info("writing image", "dest", o.Dest, "format", format)
	res, err := writeImage(disk, g, saved, guid, image, func() error {
		// The decoder may stop before the file does (padding after the
		// last stream): the checks cover the file as given.
		if _, err := io.Copy(io.Discard, raw); err != nil {
			return fmt.Errorf("reading the image: %w", err)
		}
		p.finish()
		return v.Finish()
	})
	p.finish()
	if err != nil {
		return res, err
	}
	for _, n := range res.Notes {
		log.Info(n)
	}
	if err := d.Target.Reread(disk); err != nil {
		return res, err
	}
	if disk, err = d.Target.Share(disk); err != nil {
		return res, err
	}
	*diskp = disk
	edits := BootEdits{
		Config:        cfg,
		FirstbootArgs: o.FirstbootArgs,
		Platform:      o.Platform,
		Console:       o.Console,
		AppendKargs:   o.AppendKargs,
		DeleteKargs:   o.DeleteKargs,
	}
	if o.CopyNetwork {
		edits.NetworkDir = o.NetworkDir
	}
	if cfg == nil && o.FirstbootArgs == "" && o.Platform == "" && len(o.Console) == 0 &&
		len(o.AppendKargs) == 0 && len(o.DeleteKargs) == 0 && !o.CopyNetwork {
		// Nothing to edit: the boot filesystem is left alone, as
		// coreos-installer does (src/install.rs, write_disk).
		return res, nil
	}
	dir, unmount, err := d.Target.MountBoot(ctx, o.Dest, disk)
	if err != nil {
		return res, fmt.Errorf("boot filesystem of %s: %w", o.Dest, err)
	}
	err = edits.Apply(dir, func(format string, args ...any) { log.Info(fmt.Sprintf(format, args...)) })
	if uerr := unmount(); uerr != nil {
		err = errors.Join(err, fmt.Errorf("unmounting the boot filesystem: %w", uerr))
	}
	if err != nil {
		return res, fmt.Errorf("boot filesystem of %s: %w", o.Dest, err)
	}
	if err := disk.Sync(); err != nil {
		return res, fmt.Errorf("syncing %s: %w", o.Dest, err)
	}
	return res, nil
}

func cmpDur(a, b time.Duration) time.Duration {
	if a != 0 {
		return a
	}
	return b
}

// loadConfig reads the config for the installed system and validates it
// with flint's validator: an invalid config is refused before any disk
// is touched (coreos-installer only checks it is JSON). It returns the
// config's bytes unchanged and the validator's warnings.
func loadConfig(ctx context.Context, o Options, f fetcher) ([]byte, []config.Entry, error) {
	var raw []byte
	var src string
	switch {
	case o.IgnitionFile != "":
		src = o.IgnitionFile
		b, err := os.ReadFile(o.IgnitionFile)
		if err != nil {
			return nil, nil, fmt.Errorf("config: %w", err)
		}
		raw = b
	case o.IgnitionURL != "":
		if !isURL(o.IgnitionURL) {
			return nil, nil, fmt.Errorf("--ignition-url %s: not an http or https URL", o.IgnitionURL)
		}
		src = o.IgnitionURL
		if u, _ := url.Parse(o.IgnitionURL); u.Scheme == "http" && o.IgnitionHash == "" && !o.InsecureIgnition {
			return nil, nil, errors.New("refusing to fetch the config over http without --ignition-hash or --insecure-ignition")
		}
		b, err := f.readSmall(ctx, o.IgnitionURL)
		if err != nil {
			return nil, nil, fmt.Errorf("config: %w", err)
		}
		raw = b
	default:
		return nil, nil, nil
	}
	if o.IgnitionHash != "" {
		dg, err := ParseDigest(o.IgnitionHash)
		if err != nil {
			return nil, nil, fmt.Errorf("--ignition-hash: %w", err)
		}
		h := dg.New()
		h.Write(raw)
		if err := dg.Check(h.Sum(nil)); err != nil {
			return nil, nil, fmt.Errorf("config %s: %w", src, err)
		}
	}
	_, _, report, err := config.ParseDeclared(raw)
	if err != nil || report.IsFatal() {
		return nil, nil, &ConfigError{Source: src, Report: report}
	}
	return raw, report.Entries, nil
}

// integrity gathers what the image is checked with: --image-hash, and the
// signature (IMAGE.sig or --image-sig) with the keyring, in a GnuPG home
// the caller closes. One of them is needed unless --insecure; a signature
// that cannot be found is only tolerated with --image-hash or --insecure,
// unless --image-sig named it, and so are a missing distro keyring and a
// missing gpg.
func integrity(ctx context.Context, o Options, f fetcher, cmds Commands, log *slog.Logger) (*Digest, *gpgHome, error) {
	var digest *Digest
	if o.ImageHash != "" {
		dg, err := ParseDigest(o.ImageHash)
		if err != nil {
			return nil, nil, fmt.Errorf("--image-hash: %w", err)
		}
		digest = &dg
	}
	covered := digest != nil || o.Insecure
	sigLoc := o.sigLocation()
	sig, err := f.readSmall(ctx, sigLoc)
	if err != nil {
		if o.ImageSig != "" || !covered {
			if !covered {
				return nil, nil, fmt.Errorf("image signature %s: %w (give --image-hash, or --insecure to skip verification): %w", sigLoc, err, ErrUnverified)
			}
			return nil, nil, fmt.Errorf("image signature %s: %w", sigLoc, err)
		}
		if digest == nil {
			log.Warn("image signature not found; skipping verification as asked (--insecure)", "signature", sigLoc)
		}
		return digest, nil, nil
	}
	if _, err := os.Stat(o.keyring()); err != nil {
		if o.Keyring == "" && covered {
			// No distro keyring, but the image is covered by its digest
			// or the user waived the checks: the signature cannot be
			// checked.
			log.Warn("no keyring to check the image signature with; relying on --image-hash or --insecure",
				"keyring", o.keyring(), "signature", sigLoc)
			return digest, nil, nil
		}
		return nil, nil, fmt.Errorf("keyring for the image signature: %w", err)
	}
	home, err := newGPGHome(ctx, cmds, o.keyring(), sig)
	if errors.Is(err, errNoGPG) {
		if covered {
			log.Warn("gpg is not installed, the image signature cannot be checked; relying on --image-hash or --insecure",
				"signature", sigLoc)
			return digest, nil, nil
		}
		return nil, nil, fmt.Errorf("image signature %s: %w (install gnupg, or give --image-hash): %w", sigLoc, err, ErrUnverified)
	}
	if err != nil {
		return nil, nil, err
	}
	return digest, home, nil
}

// verifyFile checks a local image file whole.
func verifyFile(ctx context.Context, name string, digest *Digest, home *gpgHome) error {
	if home != nil {
		if err := home.check(ctx, name); err != nil {
			return fmt.Errorf("image %s: signature: %w", name, err)
		}
	}
	if digest == nil {
		return nil
	}
	file, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("image: %w", err)
	}
	defer file.Close()
	h := digest.New()
	if _, err := io.CopyBuffer(h, file, make([]byte, 1<<20)); err != nil {
		return fmt.Errorf("image %s: %w", name, err)
	}
	if err := digest.Check(h.Sum(nil)); err != nil {
		return fmt.Errorf("image %s: image: %w", name, err)
	}
	return nil
}
