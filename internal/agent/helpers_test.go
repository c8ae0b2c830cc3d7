//go:build unix

package agent

import (
	"log/slog"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"
)

// testLogger sends the agent's log to the test's.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testFetcher is the real fetcher with its retries shortened: a request
// that keeps failing gives up after total.
func testFetcher(t *testing.T, total time.Duration) *resource.Fetcher {
	f := resource.New(resource.Options{Logger: testLogger(t), Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	f.SetTotalTimeout(total)
	return f
}

// newTestAgent returns the agent for id with the platform's services at
// base and root as its filesystem root.
func newTestAgent(t *testing.T, id, base, root string) *Agent {
	t.Helper()
	a, err := New(Deps{Getter: testFetcher(t, 2*time.Second), Logger: testLogger(t), Root: root, Endpoint: base, LocalPort: func() int { return 0 }, DriveWait: 10 * time.Millisecond}, id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Well-formed public keys (made with ssh-keygen for these tests), for the
// tests that write keys: the agent refuses malformed ones.
const (
	testKeyOne = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICL5yb/1jNsSJ1oA3LqFLD+VZyWl9xTTZTfwOaqq0EiO one"
	testKeyTwo = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDKl8xhuYZDmP2DMNA73QnDw4/X92/04Jy7cKmSLWcTbZzB4snHrlK0NB7ndwgu/8i19VIf8H5+jArwgltNeWIe84fDjoTd5sgVYh8SoZ16fv/QsnBfl9QeSq3rL/NhXRatuIOAVKY7/y2roDpIeriqA16JObZLog90oX3ENMcLYQ== two"
)
