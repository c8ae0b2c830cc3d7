package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/butane"
)

const translateUsage = `usage: flint translate [-s|--strict] [-p|--pretty] [-r|--raw] [-c|--check] [-d|--files-dir DIR] [-o|--output FILE] [FILE|-]
  translates a Butane config (stdin without FILE) into a config, as butane does;
  docs/butane.md lists the variants and versions`

// translateOptions are flint translate's options.
type translateOptions struct {
	strict, pretty, raw, check bool
	filesDir, output           string
}

// translateFlags declares flint translate's options, each under Butane's
// long and short name; its man page and completions are made from the
// same FlagSet (gen.go).
func translateFlags() (*flag.FlagSet, *translateOptions) {
	var o translateOptions
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, name := range []string{"strict", "s"} {
		fs.BoolVar(&o.strict, name, false, "fail on any warning")
	}
	for _, name := range []string{"pretty", "p"} {
		fs.BoolVar(&o.pretty, name, false, "indent the JSON output")
	}
	for _, name := range []string{"raw", "r"} {
		fs.BoolVar(&o.raw, name, false, "never wrap in a MachineConfig; write the config itself")
	}
	for _, name := range []string{"check", "c"} {
		fs.BoolVar(&o.check, name, false, "check the config without writing output")
	}
	for _, name := range []string{"files-dir", "d"} {
		fs.StringVar(&o.filesDir, name, "", "embed local files from `DIR`")
	}
	for _, name := range []string{"output", "o"} {
		fs.StringVar(&o.output, name, "", "write the config to `FILE`")
	}
	return fs, &o
}

// runTranslate is Butane's command with Butane's flags, so a script
// switches by changing the command name: the config goes to stdout or
// --output, the report to stderr; warnings with --strict, or errors, exit 1.
func runTranslate(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, o := translateFlags()
	// Flags may follow the file, as with Butane's getopt-style parser.
	var files []string
	for rest := args; ; {
		if err := fs.Parse(rest); errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, translateUsage)
			return nil
		} else if err != nil {
			return usageError{fmt.Sprintf("translate: %v\n\n%s", err, translateUsage)}
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	strict, pretty, raw, check, filesDir, output := o.strict, o.pretty, o.raw, o.check, o.filesDir, o.output
	if len(files) > 1 {
		return usageError{"translate: give at most one file\n\n" + translateUsage}
	}
	name := "-"
	if len(files) == 1 {
		name = files[0]
	}
	src, err := readInput(name, stdin, config.DefaultMaxSize)
	if err != nil {
		return fmt.Errorf("translate: %w", err)
	}
	restore := tuneTranslateGC(os.Getenv)
	defer restore()
	var res butane.Result
	if cfg, rep, ok, v2err := translateV2(src, pretty); ok {
		res, err = butane.Result{Config: cfg, Report: rep}, v2err
	} else {
		res, err = butane.Translate(src, butane.Options{FilesDir: filesDir, Pretty: pretty, Raw: raw})
	}
	fmt.Fprint(stderr, res.Report.String())
	if err != nil {
		fmt.Fprintf(stderr, "flint translate: %s: the config was not translated\n", displayName(name))
		return errFailed
	}
	if strict && len(res.Report.Entries) > 0 {
		fmt.Fprintf(stderr, "flint translate: %s: the config produced warnings and --strict was given\n", displayName(name))
		return errFailed
	}
	if check {
		return nil
	}
	out := append(res.Config, '\n')
	if output == "" {
		_, err := stdout.Write(out)
		return err
	}
	// 0600: a config can hold password hashes and keys.
	if err := os.WriteFile(output, out, 0o600); err != nil {
		return fmt.Errorf("translate: %w", err)
	}
	return nil
}

func displayName(name string) string {
	if name == "-" {
		return "<stdin>"
	}
	return strings.TrimSpace(name)
}
