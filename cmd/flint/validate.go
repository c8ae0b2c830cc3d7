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
)

// validateResult is one file's outcome in -json output.
type validateResult struct {
	File    string         `json:"file"`
	Valid   bool           `json:"valid"`
	Version string         `json:"version,omitempty"`
	Entries []config.Entry `json:"entries"`
}

func runValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	strict := fs.Bool("strict", false, "treat warnings as errors")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("validate: %v\n\nusage: flint validate [-strict] [-json] FILE...", err)}
	}
	files := fs.Args()
	if len(files) == 0 {
		return usageError{"validate: no file given (use - for stdin)\n\nusage: flint validate [-strict] [-json] FILE..."}
	}

	var results []validateResult
	failed := false
	for _, name := range files {
		raw, err := readInput(name, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "flint validate: %v\n", err)
			failed = true
			continue
		}
		_, v, report, err := config.ParseDeclared(raw)
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

func readInput(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		raw, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		return raw, nil
	}
	raw, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file", name)
	}
	return raw, err
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
