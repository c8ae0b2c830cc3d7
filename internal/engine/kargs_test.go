package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flintboot/flint/internal/stages/kargs"
)

// TestKargsFlag: the fetch stages leave the flag that lets
// flint-kargs.service run only when the config has kernel arguments.
func TestKargsFlag(t *testing.T) {
	for _, c := range []struct {
		name, config string
		want         bool
	}{
		{"none", `{"ignition":{"version":"3.4.0"}}`, false},
		{"empty lists", `{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":[]}}`, false},
		{"should exist", `{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":["quiet"]}}`, true},
		{"should not exist", `{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldNotExist":["rhgb"]}}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, "fetch-offline", serve(c.config))
			flag := filepath.Join(filepath.Dir(h.opts.StateFile), kargs.WantedFlag)
			// A flag left by another config goes.
			h.write("run/ignition/"+kargs.WantedFlag, "")
			h.mustRun("fetch-offline")
			if _, err := os.Stat(flag); (err == nil) != c.want {
				t.Errorf("after fetch-offline the flag exists: %v, want %v", err == nil, c.want)
			}
		})
	}
}
