package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flintboot/flint/internal/liveinstall"
)

// The live installer's files (dracut/systemd/flint-installer*, docs/install.md).
const (
	// rebootStamp tells flint-installer-reboot.service to reboot once the
	// install is done (coreos-installer's /run/coreos-installer-reboot).
	rebootStamp = "/run/flint-installer-reboot"
	// installerPostTarget is the live boot's default target when it
	// installs.
	installerPostTarget = "/usr/lib/systemd/system/flint-installer-post.target"
)

const liveUsage = `usage: flint install --from-cmdline [--cmdline FILE]
       flint install --generator [--cmdline FILE] UNITDIR
See docs/install.md, "The live installer".`

// liveOptions are the live installer's options: where it reads the kernel
// command line and the config files, and where it writes. Tests move them.
type liveOptions struct {
	cmdline    string
	dirs       []string
	stamp      string
	postTarget string
}

func defaultLiveOptions() liveOptions {
	return liveOptions{
		cmdline: "/proc/cmdline",
		// Installer config files (YAML, flint install --config-file):
		// flint's, then the peer's, so a live image made for
		// coreos-installer works unchanged.
		dirs:       []string{"/etc/flint/installer.d", "/etc/coreos/installer.d"},
		stamp:      rebootStamp,
		postTarget: installerPostTarget,
	}
}

// isLiveInstall tells runInstall's arguments for the live installer apart.
func isLiveInstall(args []string) bool {
	return len(args) > 0 && (args[0] == "--from-cmdline" || args[0] == "--generator")
}

// liveFlags declares the live installer's options, the kernel command
// line's file going to lo; its man page and completions are made from the
// same FlagSet (gen.go).
func liveFlags(lo *liveOptions) (fs *flag.FlagSet, fromCmdline, generator *bool) {
	fs = flag.NewFlagSet("install", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fromCmdline = fs.Bool("from-cmdline", false, "install as the kernel command line says (coreos.inst.*, flint.inst.*): flint-installer.service")
	generator = fs.Bool("generator", false, "be the systemd generator (flint-installer-generator), given its normal unit `DIR`")
	fs.StringVar(&lo.cmdline, "cmdline", lo.cmdline, "read the kernel command line from `FILE`")
	return fs, fromCmdline, generator
}

// runLiveInstall is flint install --from-cmdline (flint-installer.service:
// install as the kernel command line says) and flint install --generator
// (flint-installer-generator: make the live boot's default target the
// installer's when it says to install).
func runLiveInstall(ctx context.Context, args []string, stderr io.Writer, lo liveOptions) error {
	fs, fromCmdline, generator := liveFlags(&lo)
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("install: %v\n\n%s", err, liveUsage)}
	}
	if *fromCmdline == *generator || (*generator && fs.NArg() != 1) || (*fromCmdline && fs.NArg() != 0) {
		return usageError{"install: wrong arguments for the live installer\n\n" + liveUsage}
	}
	line, err := os.ReadFile(lo.cmdline)
	if err != nil {
		return fmt.Errorf("install: kernel command line: %w", err)
	}
	files, err := configFiles(lo.dirs)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	plan, planErr := liveinstall.FromCmdline(string(line), files)
	for _, n := range plan.Notes {
		fmt.Fprintln(stderr, "flint install: "+n)
	}
	if *generator {
		return generate(fs.Arg(0), plan, lo, stderr)
	}
	if planErr != nil {
		return fmt.Errorf("install: kernel command line: %w", planErr)
	}
	if !plan.Install {
		return errors.New("install: the kernel command line asks for no install (no coreos.inst.install_dev or flint.inst.install_dev) and there is no installer config file")
	}
	fmt.Fprintf(stderr, "flint install %s\n", strings.Join(plan.Args, " "))
	if err := runInstall(ctx, plan.Args, stderr); err != nil {
		return err
	}
	// A live system that boots again must not install again, as the
	// peer's script removes its directory (a persistent live image).
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("install: done, but the installer config %s stays: %w", f, err)
		}
	}
	return nil
}

// generate is the generator's job (systemd.generator(7)): when the command
// line asks for an install, the boot's default target becomes
// flint-installer-post.target, and unless skip_reboot the reboot stamp is
// made. A command line that is wrong still installs: the unit then fails
// with the reason on the console, instead of a live boot that quietly
// does nothing.
func generate(unitDir string, plan liveinstall.Plan, lo liveOptions, stderr io.Writer) error {
	if !plan.Install {
		return nil
	}
	link := filepath.Join(unitDir, "default.target")
	if err := os.Remove(link); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("install: generator: %w", err)
	}
	if err := os.Symlink(lo.postTarget, link); err != nil {
		return fmt.Errorf("install: generator: %w", err)
	}
	fmt.Fprintln(stderr, "flint-installer-generator: this boot installs: default.target is flint-installer-post.target")
	if plan.Reboot {
		if err := os.WriteFile(lo.stamp, nil, 0o644); err != nil {
			return fmt.Errorf("install: generator: reboot stamp: %w", err)
		}
	}
	return nil
}

// configFiles lists the regular files in dirs, each directory's sorted by
// name; a missing directory has none.
func configFiles(dirs []string) ([]string, error) {
	var files []string
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("installer config directory %s: %w", d, err)
		}
		var names []string
		for _, e := range entries {
			if e.Type().IsRegular() {
				names = append(names, filepath.Join(d, e.Name()))
			}
		}
		sort.Strings(names)
		files = append(files, names...)
	}
	return files, nil
}
