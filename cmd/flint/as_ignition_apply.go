package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/flags"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages/fetchoffline"
	"github.com/flintboot/flint/internal/stages/files"
	"github.com/flintboot/flint/internal/sys"
)

// ignitionApplyFlags are ignition-apply's (coreos/ignition internal/main.go,
// ignitionApplyMain).
var ignitionApplyFlags = flags.PflagSet{
	{Long: "version", Help: "print the version of ignition-apply"},
	{Long: "root", String: true, Default: "/", Help: "root of the filesystem"},
	{Long: "ignore-unsupported", Help: "ignore unsupported config sections"},
	{Long: "offline", Help: "error out if config references remote resources"},
}

const ignitionApplyHead = "Usage: ignition-apply [options] config.ign\nOptions:\n"

// errNotContainer is ignition-apply's refusal on a host (coreos/ignition
// internal/apply/apply.go, Run).
var errNotContainer = errors.New("this tool is not designed to run on a host system; reprovision the machine instead")

// inContainer says whether flint runs in a container, as ignition-apply
// tells (internal/apply/apply.go, inContainer): $container is set
// (systemd-nspawn, podman, docker), or /run/.containerenv or /.dockerenv
// exists.
func inContainer() bool {
	if os.Getenv("container") != "" {
		return true
	}
	for _, p := range []string{"/run/.containerenv", "/.dockerenv"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// runIgnitionApply is `ignition-apply [--root DIR] [--ignore-unsupported]
// [--offline] CONFIG`.
func runIgnitionApply(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return ignitionApply(ctx, args, stdin, stdout, stderr, inContainer)
}

// ignitionApply applies a config to a running system as ignition-apply does
// (coreos/ignition internal/apply/apply.go), over the files stage's Apply:
// only in a container (container says whether flint runs in one); the
// config (a file, or "-" for standard input) is parsed, its merge and
// replace followed, checked offline with --offline as fetch-offline checks
// it, and then each stage's part in boot order: kernel arguments, disks
// and filesystems are refused ("cannot apply … live") unless
// --ignore-unsupported, as are users and groups; directories, files, links
// and units are written under --root. The log goes to standard output, as
// Ignition's does; every failure exits 1.
func ignitionApply(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, container func() bool) error {
	p, err := parsePflags(ignitionApplyFlags, ignitionApplyHead, args, stderr)
	if err != nil {
		return err
	}
	if p.Bool("version") {
		fmt.Fprintln(stdout, ignitionVersion())
		return nil
	}
	if len(p.Args) != 1 {
		io.WriteString(stderr, ignitionApplyHead+ignitionApplyFlags.Defaults())
		return exitStatus{code: 1}
	}
	out := oplog.NewDelayedWriter(stdout, logDelay)
	defer out.Flush()
	logger := slog.New(oplog.NewTextHandler(out, slog.LevelInfo)).With(oplog.StageKey, "apply")
	logger.Info(ignitionVersion())

	raw, err := readInput(p.Args[0], stdin, config.DefaultMaxSize)
	if err != nil {
		return exitStatus{1, "couldn't read config: " + err.Error()}
	}
	cfg, report, err := config.Parse(raw)
	for _, e := range report.Entries {
		logger.Warn(e.String())
	}
	if err != nil {
		return exitStatus{1, "couldn't parse config: " + err.Error()}
	}
	if err := applyConfig(ctx, cfg, p, logger, container); err != nil {
		return exitStatus{1, "failed to apply: " + err.Error()}
	}
	return nil
}

// applyConfig is ignition-apply's Run.
func applyConfig(ctx context.Context, cfg config.Config, p *flags.PflagResult, logger *slog.Logger, container func() bool) error {
	if !container() {
		return errNotContainer
	}
	root, err := filepath.Abs(p.String("root"))
	if err != nil {
		return err
	}
	offline := p.Bool("offline")
	fetcher := resource.New(resource.Options{Logger: logger.With(oplog.OpKey, "fetch"), Offline: offline, Version: version})
	cfg, err = config.Render(cfg, func(settings config.Config, res config.Resource) (config.Config, error) {
		if err := fetcher.Configure(ctx, settings.Ignition); err != nil {
			return config.Config{}, err
		}
		raw, err := fetcher.FetchConfig(ctx, res)
		if err != nil {
			return config.Config{}, err
		}
		c, _, err := config.Parse(raw)
		return c, err
	})
	if err != nil {
		return err
	}
	if err := fetcher.Configure(ctx, cfg.Ignition); err != nil {
		return err
	}
	if offline {
		// Needing the network is known before anything is written.
		if err := fetchoffline.Run(ctx, fetchoffline.Deps{Config: cfg, Logger: logger}); err != nil {
			return err
		}
	}
	ignore := p.Bool("ignore-unsupported")
	st := cfg.Storage
	for _, c := range []struct {
		stage, what string
		present     bool
	}{
		{"kargs", "kargs modifications", len(cfg.KernelArguments.ShouldExist)+len(cfg.KernelArguments.ShouldNotExist) > 0},
		{"disks", "disk modifications", len(st.Disks)+len(st.Raid)+len(st.Filesystems)+len(st.Luks) > 0},
		{"mount", "filesystems modifications", len(st.Filesystems) > 0},
		{"files", "passwd", len(cfg.Passwd.Users)+len(cfg.Passwd.Groups) > 0},
	} {
		if c.present && !ignore {
			return fmt.Errorf("running stage '%s': cannot apply %s live", c.stage, c.what)
		}
	}
	err = files.Apply(ctx, files.Deps{
		Config:  cfg,
		Logger:  logger,
		Root:    root,
		Fetcher: fetcher,
		Runner:  sys.Runner{},
	})
	if err != nil {
		return fmt.Errorf("running stage 'files': %w", err)
	}
	return nil
}
