package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flintboot/flint/internal/engine"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/resource"
)

// ignitionVersion is the version line of the Ignition front ends: the
// Ignition release flint answers as, and flint's own version. Ignition
// prints "Ignition v2.26.0" (internal/version/version.go); a script that
// reads the first two words gets what it expects.
func ignitionVersion() string {
	return "Ignition v" + resource.IgnitionRelease + " (flint " + version + ")"
}

// runIgnition is `ignition`: Ignition's command line (coreos/ignition
// internal/main.go, ignitionMain), parsed by Go's flag package as
// Ignition's is (-x, --x, -x v, --x=v), with its defaults, over flint
// run's stage runner. The IGNITION_* environment variables
// (IGNITION_SYSTEM_CONFIG_DIR and its two siblings,
// IGNITION_KERNEL_CMDLINE_PATH, IGNITION_CONFIG_FILE,
// IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT) are read by the stages as in
// `flint run`. Exit status as Ignition's: 2 for a usage mistake (a flag,
// or --platform or --stage missing), 3 when the stage could not start,
// 1 when it failed.
func runIgnition(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ignition", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var platformID, stage string
	cache := fs.String("config-cache", engine.DefaultConfigCache, "where to cache the rendered config")
	fetchTimeout := fs.Duration("fetch-timeout", engine.DefaultFetchTimeout, "how long to wait for the config at first")
	neednet := fs.String("neednet", engine.DefaultNeedNet, "flag file fetch-offline writes when the network is needed")
	fs.Func("platform", fmt.Sprintf("current platform. %v", platform.IDs()), func(s string) error {
		if _, ok := platform.Lookup(s); !ok {
			return fmt.Errorf("%s is not a valid platform", s)
		}
		platformID = s
		return nil
	})
	root := fs.String("root", engine.DefaultRoot, "root of the filesystem")
	fs.Func("stage", fmt.Sprintf("execution stage. %v", engine.Stages()), func(s string) error {
		if !slices.Contains(engine.Stages(), s) {
			return fmt.Errorf("%s is not a valid stage", s)
		}
		stage = s
		return nil
	})
	state := fs.String("state-file", engine.DefaultStateFile, "where to keep state between stages")
	showVersion := fs.Bool("version", false, "print the version and exit")
	toStdout := fs.Bool("log-to-stdout", false, "log to standard output instead of the journal")
	if err := fs.Parse(args); err != nil {
		// The flag package printed the error and the usage.
		if errors.Is(err, flag.ErrHelp) {
			return exitStatus{code: 0}
		}
		return exitStatus{code: 2}
	}
	// As Ignition, arguments after the flags are ignored.
	switch {
	case *showVersion:
		fmt.Fprintln(stdout, ignitionVersion())
		return nil
	case platformID == "":
		return exitStatus{2, "'--platform' must be provided"}
	case stage == "":
		return exitStatus{2, "'--stage' must be provided"}
	}
	runArgs := []string{
		"-stage", stage, "-platform", platformID, "-root", *root,
		"-config-cache", *cache, "-state-file", *state, "-neednet", *neednet,
		"-fetch-timeout", fetchTimeout.String(),
	}
	if *toStdout {
		runArgs = append(runArgs, "-log-to-stdout")
	}
	err := runStageAs(ctx, runArgs, stdout, "ignition")
	var se setupError
	var ue usageError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue):
		// A value Ignition's flags accept and flint run does not (a
		// negative --fetch-timeout): the first line says which.
		msg, _, _ := strings.Cut(ue.msg, "\n")
		return exitStatus{2, msg}
	case errors.As(err, &se):
		return exitStatus{3, "Ignition failed: " + err.Error()}
	default:
		return exitStatus{1, "Ignition failed: " + strings.TrimSpace(err.Error())}
	}
}
