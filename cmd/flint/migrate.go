package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/flintboot/flint/config"
)

// migration is a command that translates another tool's input into a
// config: flint kickstart and flint cloud-config.
type migration struct {
	name  string // the command
	usage string
	input string // what the one argument is: "kickstart file"
	items string // what the report's entries are about: "lines"
	// untranslatable is the translator's error for a report with errors.
	untranslatable error
	// flags defines the command's own flags and returns the translation,
	// to run once they are parsed.
	flags func(fs *flag.FlagSet) translation
}

// translation translates the input, named name, into a config of spec
// v; the report is what to print whether or not it fails.
type translation func(name string, raw []byte, v config.Version) (cfg []byte, report string, err error)

// migrationOptions are the options every migration command takes.
type migrationOptions struct {
	out, spec  string
	incomplete bool
}

// migrationFlags declares the options every migration command takes, on
// a FlagSet named name; the command adds its own (migration.flags).
func migrationFlags(name string) (*flag.FlagSet, *migrationOptions) {
	var o migrationOptions
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.out, "o", "", "write the config to `FILE` (mode 0600) instead of standard output")
	fs.StringVar(&o.spec, "spec", config.NewestStable.String(), "the spec `VERSION` of the config")
	fs.BoolVar(&o.incomplete, "allow-incomplete", false, "write the config even when the report has errors")
	return fs, &o
}

// runMigration runs a migration command. The config goes to -o (mode
// 0600: it can hold password hashes and LUKS passphrases) or to stdout;
// the report goes to stderr, one entry a line as flint validate prints it,
// and ends with a count of what became of each item. Errors in the report
// (items not translated) exit 1 and, unless -allow-incomplete, no config
// is written: a config without them would give a machine that is not what
// the input describes.
func runMigration(m migration, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, o := migrationFlags(m.name)
	out, spec, incomplete := &o.out, &o.spec, &o.incomplete
	translate := m.flags(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("%s: %v\n\n%s", m.name, err, m.usage)}
	}
	if fs.NArg() != 1 {
		return usageError{fmt.Sprintf("%s: give one %s (- for stdin)\n\n%s", m.name, m.input, m.usage)}
	}
	v, err := config.ParseVersion(*spec)
	if err != nil {
		return usageError{fmt.Sprintf("%s: -spec: %v", m.name, err)}
	}
	name := fs.Arg(0)
	raw, err := readInput(name, stdin, config.DefaultMaxSize)
	if err != nil {
		return err
	}
	if name == "-" {
		name = "<stdin>" // a kickstart's %include is then relative to the working directory
	}
	cfg, report, err := translate(name, raw, v)
	fmt.Fprint(stderr, report)
	if err != nil && !errors.Is(err, m.untranslatable) {
		return fmt.Errorf("%s %s: %w", m.name, name, err)
	}
	if err != nil && !*incomplete {
		fmt.Fprintf(stderr, "%s %s: no config written: the %s above with errors are not translated; fix them, or use -allow-incomplete to write the config of the rest\n", m.name, name, m.items)
		return errFailed
	}
	if *out == "" {
		if _, werr := stdout.Write(cfg); werr != nil {
			return werr
		}
	} else if werr := os.WriteFile(*out, cfg, 0o600); werr != nil {
		return fmt.Errorf("%s: %w", m.name, werr)
	}
	if err != nil {
		return errFailed
	}
	return nil
}
