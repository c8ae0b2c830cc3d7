package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/flintboot/flint/config"
)

// runIgnitionValidate is `ignition-validate [--version] CONFIG` (coreos/ignition
// validate/main.go), over flint's config validation: CONFIG is a file or
// "-" for standard input; the report goes to standard output, one entry a
// line, in Ignition's words ("error at $.path, line L col C: message");
// exit status 1 when the config is not valid or cannot be read, or when
// there is not exactly one CONFIG (after the usage), 0 otherwise, warnings
// included. Where Ignition's parser has no report to give (an empty
// config, a version missing or unknown), the reason goes to standard
// error as Ignition words it.
func runIgnitionValidate(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ignition-validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	showVersion := fs.Bool("version", false, "print the version of ignition-validate")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage:\n  %s [flags] config.ign\n\n", fs.Name())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitStatus{code: 0}
		}
		return exitStatus{code: 2}
	}
	if *showVersion {
		fmt.Fprintln(stdout, ignitionVersion())
		return nil
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitStatus{code: 1}
	}
	raw, err := readInput(fs.Arg(0), stdin, config.DefaultMaxSize)
	if err != nil {
		return exitStatus{1, "couldn't read config: " + err.Error()}
	}
	restore := limitMemory(os.Getenv, int64(len(raw)))
	_, report, err := config.Parse(raw)
	restore()
	switch {
	case errors.Is(err, config.ErrEmpty):
		// Ignition: "couldn't parse config: not a config (empty)".
		return exitStatus{1, "couldn't parse config: " + config.ErrEmpty.Error()}
	case errors.Is(err, config.ErrInvalidVersion):
		return exitStatus{1, "couldn't parse config: invalid config version (couldn't parse)"}
	case errors.Is(err, config.ErrUnknownVersion):
		return exitStatus{1, "couldn't parse config: " + config.ErrUnknownVersion.Error()}
	}
	io.WriteString(stdout, report.String())
	if report.IsFatal() || err != nil {
		return exitStatus{code: 1}
	}
	return nil
}
