package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/kickstart"
)

const kickstartUsage = "usage: flint kickstart [-o FILE] [-spec 3.x.0] [-allow-incomplete] FILE (- for stdin)"

// runKickstart translates a kickstart file into a config. The config goes
// to -o (mode 0600: it can hold password hashes and LUKS passphrases) or to
// stdout; the report goes to stderr, one entry a line as flint validate
// prints it, and ends with a count of what became of each command. Errors
// in the report (commands not translated) exit 1 and, unless
// -allow-incomplete, no config is written: a config without them would
// give a machine that is not what the kickstart describes.
func runKickstart(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kickstart", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "write the config to FILE")
	spec := fs.String("spec", config.NewestStable.String(), "spec version of the config")
	incomplete := fs.Bool("allow-incomplete", false, "write the config even when the report has errors")
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("kickstart: %v\n\n%s", err, kickstartUsage)}
	}
	if fs.NArg() != 1 {
		return usageError{"kickstart: give one kickstart file (- for stdin)\n\n" + kickstartUsage}
	}
	v, err := config.ParseVersion(*spec)
	if err != nil {
		return usageError{fmt.Sprintf("kickstart: -spec: %v", err)}
	}
	name := fs.Arg(0)
	raw, err := readInput(name, stdin, config.DefaultMaxSize)
	if err != nil {
		return err
	}
	if name == "-" {
		name = "<stdin>" // %include is then relative to the working directory
	}
	res, err := kickstart.Translate(name, raw, kickstart.Options{Version: v})
	fmt.Fprint(stderr, res.Report.String())
	if err != nil && !errors.Is(err, kickstart.ErrUntranslatable) {
		return fmt.Errorf("kickstart %s: %w", name, err)
	}
	if err != nil && !*incomplete {
		fmt.Fprintf(stderr, "kickstart %s: no config written: the lines above with errors are not translated; fix them, or use -allow-incomplete to write the config of the rest\n", name)
		return errFailed
	}
	if *out == "" {
		if _, werr := stdout.Write(res.Config); werr != nil {
			return werr
		}
	} else if werr := os.WriteFile(*out, res.Config, 0o600); werr != nil {
		return fmt.Errorf("kickstart: %w", werr)
	}
	if err != nil {
		return errFailed
	}
	return nil
}
