package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/cloudconfig"
)

const cloudConfigUsage = "usage: flint cloud-config [-o FILE] [-spec 3.x.0] [-default-user NAME] [-allow-incomplete] FILE (- for stdin)"

// runCloudConfig translates cloud-init user-data into a config, as
// runKickstart does a kickstart: the config to -o (mode 0600: it can hold
// password hashes) or stdout, the report to stderr, and, when the report
// has errors, exit 1 and no config unless -allow-incomplete.
func runCloudConfig(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cloud-config", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "write the config to FILE")
	spec := fs.String("spec", config.NewestStable.String(), "spec version of the config")
	user := fs.String("default-user", "core", "the distro's default user, who gets the top-level ssh_authorized_keys")
	incomplete := fs.Bool("allow-incomplete", false, "write the config even when the report has errors")
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("cloud-config: %v\n\n%s", err, cloudConfigUsage)}
	}
	if fs.NArg() != 1 {
		return usageError{"cloud-config: give one user-data file (- for stdin)\n\n" + cloudConfigUsage}
	}
	v, err := config.ParseVersion(*spec)
	if err != nil {
		return usageError{fmt.Sprintf("cloud-config: -spec: %v", err)}
	}
	name := fs.Arg(0)
	raw, err := readInput(name, stdin, config.DefaultMaxSize)
	if err != nil {
		return err
	}
	if name == "-" {
		name = "<stdin>"
	}
	res, err := cloudconfig.Translate(name, raw, cloudconfig.Options{Version: v, DefaultUser: *user})
	fmt.Fprint(stderr, res.Report.String())
	if err != nil && !errors.Is(err, cloudconfig.ErrUntranslatable) {
		return fmt.Errorf("cloud-config %s: %w", name, err)
	}
	if err != nil && !*incomplete {
		fmt.Fprintf(stderr, "cloud-config %s: no config written: the keys above with errors are not translated; fix them, or use -allow-incomplete to write the config of the rest\n", name)
		return errFailed
	}
	if *out == "" {
		if _, werr := stdout.Write(res.Config); werr != nil {
			return werr
		}
	} else if werr := os.WriteFile(*out, res.Config, 0o600); werr != nil {
		return fmt.Errorf("cloud-config: %w", werr)
	}
	if err != nil {
		return errFailed
	}
	return nil
}
