package engine

import (
	"path/filepath"
	"testing"

	"github.com/flintboot/flint/internal/platform"
)

// TestCmdlineReadOnce: every stage reads the kernel command line once,
// however many of its parts (the config source, the size limit, the idle
// timeout, root=) look at it.
func TestCmdlineReadOnce(t *testing.T) {
	h := newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"3.4.0"}}`))
	cmdline := "root=LABEL=root flint.config.max_size=1M flint.fetch_idle_timeout=45 ignition.config.url=data:," +
		`%7B%22ignition%22%3A%7B%22version%22%3A%223.4.0%22%7D%7D`
	reads := 0
	h.opts.ReadCmdline = func() (platform.Cmdline, error) {
		reads++
		return platform.ParseCmdline(cmdline), nil
	}
	h.opts.NewFetcher = nil // the default reads the idle timeout
	h.opts.Root = filepath.Join(h.dir, "sysroot")
	h.write("sysroot/etc/passwd", "root:x:0:0::/root:/bin/sh\n")
	for _, stage := range []string{"fetch-offline", "fetch", "kargs", "disks", "mount", "files", "umount"} {
		reads = 0
		h.mustRun(stage)
		if reads != 1 {
			t.Errorf("Run(%s) read the kernel command line %d times, want once", stage, reads)
		}
	}
	if h.calls != 0 {
		t.Error("the platform was asked although the command line names the config")
	}
}
