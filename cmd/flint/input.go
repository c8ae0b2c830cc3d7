package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/input"
)

// readConfig reads the config plan and apply act on: a config (spec 3.x,
// or 2.x translated up), or a Butane config translated first (its local
// files from filesDir, as validate and translate read them), through the
// one input reader. The validator's report goes to stderr; a config it
// refuses is errFailed.
func readConfig(name, filesDir string, stdin io.Reader, stderr io.Writer) (config.Config, error) {
	raw, err := readInput(name, stdin, config.DefaultMaxSize)
	if err != nil {
		return config.Config{}, err
	}
	res, err := input.Read(raw, input.Options{FilesDir: filesDir, IgnitionOnly: true})
	if errors.Is(err, input.ErrMachineConfig) {
		err = fmt.Errorf("%s: %w", name, err)
	}
	for _, e := range res.Report.Entries {
		fmt.Fprintln(stderr, e.String())
	}
	if err != nil && len(res.Report.Entries) > 0 {
		return res.Model, errFailed
	}
	return res.Model, err
}
