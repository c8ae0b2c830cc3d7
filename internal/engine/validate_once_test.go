package engine

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// TestRenderedConfigCheckedWithNewestRules: a config of an older spec is
// checked with its own rules when parsed and with the newest ones before
// it is cached (a link without a target is fine in 3.2, not since 3.3),
// so the second check is no duplicate.
func TestRenderedConfigCheckedWithNewestRules(t *testing.T) {
	h := newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"3.2.0"},"storage":{"links":[{"path":"/l"}]}}`))
	err := h.run("fetch-offline")
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "link target is required") {
		t.Fatalf("Run() = %v, want ErrInvalidConfig naming the missing target", err)
	}
	if h.hasCache() {
		t.Error("an invalid config was cached")
	}
}

// TestNewestConfigCheckedOnce: a config of the newest spec that names no
// other config was checked with the newest rules when parsed: its warning
// is logged once, not again for the rendered config.
func TestNewestConfigCheckedOnce(t *testing.T) {
	h := newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"3.7.0-experimental"},"storage":{"links":[{"path":"/h","target":"/t","hard":true,"user":{"id":5}}]}}`))
	h.mustRun("fetch-offline")
	if n := strings.Count(h.logs.String(), "user and group are ignored for hard links"); n != 1 {
		t.Errorf("the warning was logged %d times, want once", n)
	}
	if !h.hasCache() {
		t.Error("no cache")
	}
}

// TestNewestConfigMergeConflictRefused: once a config of the newest spec
// merges another, the result is checked again: a merge that puts a file
// under a link is refused and not cached.
func TestNewestConfigMergeConflictRefused(t *testing.T) {
	child := `{"ignition":{"version":"3.7.0-experimental"},"storage":{"links":[{"path":"/a","target":"/x"}]}}`
	h := newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"3.7.0-experimental","config":{"merge":[{"source":"data:,`+url.PathEscape(child)+`"}]}},"storage":{"files":[{"path":"/a/b"}]}}`))
	err := h.run("fetch-offline")
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "under the link /a") {
		t.Fatalf("Run() = %v, want ErrInvalidConfig with the reason", err)
	}
	if h.hasCache() {
		t.Error("an invalid config was cached")
	}
}
