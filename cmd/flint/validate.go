package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/input"
)

// validateResult is one file's outcome in -json output.
type validateResult struct {
	File    string         `json:"file"`
	Valid   bool           `json:"valid"`
	Version string         `json:"version,omitempty"`
	Entries []config.Entry `json:"entries"`
}

// validateOptions are flint validate's options.
type validateOptions struct {
	strict, json      bool
	filesDir, maxSize string
}

// validateFlags declares flint validate's options; its man page and
// completions are made from the same FlagSet (gen.go).
func validateFlags() (*flag.FlagSet, *validateOptions) {
	var o validateOptions
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&o.strict, "strict", false, "treat warnings as errors")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.StringVar(&o.filesDir, "files-dir", "", "the `DIR` of a Butane config's local files (as flint translate -d)")
	fs.StringVar(&o.maxSize, "max-size", "64M", "refuse configs larger than `SIZE` (K, M, G: powers of 1024)")
	return fs, &o
}

func runValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, o := validateFlags()
	strict, asJSON, filesDir, maxSizeFlag := &o.strict, &o.json, &o.filesDir, &o.maxSize
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("validate: %v\n\n%s", err, validateUsage)}
	}
	maxSize, err := config.ParseSize(*maxSizeFlag)
	if err != nil {
		return usageError{fmt.Sprintf("validate: -max-size: %v\n\n%s", err, validateUsage)}
	}
	files := fs.Args()
	if len(files) == 0 {
		return usageError{"validate: no file given (use - for stdin)\n\n" + validateUsage}
	}

	var results []validateResult
	failed := false
	for _, name := range files {
		raw, err := readInput(name, stdin, maxSize)
		if err != nil {
			if errors.Is(err, config.ErrTooLarge) {
				err = fmt.Errorf("%w; -max-size raises the limit", err)
			}
			fmt.Fprintf(stderr, "flint validate: %v\n", err)
			failed = true
			continue
		}
		restore := limitMemory(os.Getenv, int64(len(raw)))
		v, report, err := validateConfig(raw, *filesDir)
		restore()
		res := validateResult{File: name, Valid: err == nil && !(*strict && report.HasWarnings()), Entries: report.Entries}
		if v != (config.Version{}) {
			res.Version = v.String()
		}
		if res.Entries == nil {
			res.Entries = []config.Entry{}
		}
		failed = failed || !res.Valid
		if *asJSON {
			results = append(results, res)
			continue
		}
		printReport(stdout, res, len(files) > 1)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			return err
		}
	}
	if failed {
		return errFailed
	}
	return nil
}

// printReport writes one line per entry, prefixed with the file name when
// several files are checked.
func printReport(w io.Writer, res validateResult, prefix bool) {
	var b bytes.Buffer
	for _, e := range res.Entries {
		if prefix {
			b.WriteString(res.File)
			b.WriteString(": ")
		}
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	w.Write(b.Bytes())
}

const validateUsage = "usage: flint validate [-strict] [-json] [-max-size SIZE] [-files-dir DIR] FILE..."

// validateConfig checks a config, or a Butane config by translating it: a
// Butane config's report has its YAML paths and lines.
func validateConfig(raw []byte, filesDir string) (config.Version, config.Report, error) {
	// An openshift config is checked as a MachineConfig, with the
	// Machine Config Operator's limits.
	res, err := input.Read(raw, input.Options{FilesDir: filesDir})
	return res.Version, res.Report, err
}

// readInput reads the file name, or stdin for "-", refusing more than
// limit bytes (config.ErrTooLarge) without reading the rest: the limit
// bounds the memory validation takes.
func readInput(name string, stdin io.Reader, limit int64) ([]byte, error) {
	r := stdin
	size := 512
	if name == "-" {
		name = "stdin"
	} else {
		f, err := os.Open(name)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file", name)
		}
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
		// A file says its size: read it into one buffer of that size
		// rather than doubling one from 512 bytes (a dozen copies and
		// twice the memory touched for a 3 MB Butane config). The
		// limit applies to what is read, whatever the size said.
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = int(min(fi.Size(), limit)) + 1
		}
	}
	raw, err := readAllInto(make([]byte, 0, size), io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("%s: %w: more than the limit of %d bytes", name, config.ErrTooLarge, limit)
	}
	return raw, nil
}

// readAllInto appends everything r gives to buf, as io.ReadAll does but
// starting from buf's capacity.
func readAllInto(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func runVersion(stdout io.Writer) error {
	specs := make([]string, len(config.SupportedVersions))
	for i, v := range config.SupportedVersions {
		specs[i] = v.String()
	}
	_, err := fmt.Fprintf(stdout, "flint %s\nconfig specs: %s\nspec 2.x configs, translated to 3.x: %s\n",
		version, strings.Join(specs, ", "), strings.Join(config.Spec2Versions(), ", "))
	return err
}
