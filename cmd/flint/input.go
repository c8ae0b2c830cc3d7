package main

import (
	"fmt"
	"io"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/butane"
)

// readConfig reads the config plan and apply act on: a config, or a
// Butane config translated first (its local files from filesDir, as
// validate and translate read them). The validator's report goes to
// stderr; a config it refuses is errFailed.
func readConfig(name, filesDir string, stdin io.Reader, stderr io.Writer) (config.Config, error) {
	raw, err := readInput(name, stdin, config.DefaultMaxSize)
	if err != nil {
		return config.Config{}, err
	}
	var cfg config.Config
	var report config.Report
	if butane.IsButane(raw) {
		var res butane.Result
		res, err = butane.Translate(raw, butane.Options{FilesDir: filesDir})
		if err == nil && res.MachineConfig {
			err = fmt.Errorf("%s: an OpenShift MachineConfig is not a config flint applies", name)
		}
		cfg, report = res.Model, res.Report
	} else {
		cfg, report, err = config.Parse(raw)
	}
	for _, e := range report.Entries {
		fmt.Fprintln(stderr, e.String())
	}
	if err != nil && len(report.Entries) > 0 {
		return cfg, errFailed
	}
	return cfg, err
}
