//go:build unix

package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/platform"
)

// unitPlatforms returns the platforms a unit is conditioned on.
func unitPlatforms(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(string(data), "\n") {
		v, ok := strings.CutPrefix(line, "ConditionKernelCommandLine=")
		if !ok {
			continue
		}
		if id, ok := strings.CutPrefix(strings.TrimPrefix(v, "|"), platform.ArgPlatformID+"="); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// tablePlatforms returns the platforms whose row has has.
func tablePlatforms(has func(platform.Platform) bool) []string {
	var ids []string
	for _, p := range platform.All() {
		if has(p) {
			ids = append(ids, p.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// The units run where the table says the agent does something, and
// nowhere else: a unit conditioned on a platform the code does not serve
// would fail every boot there.
func TestUnitsMatchTable(t *testing.T) {
	withMetadata := tablePlatforms(func(p platform.Platform) bool { return p.Metadata != nil })
	var deleters []string
	for _, id := range platform.IDs() {
		p, _ := platform.Lookup(id)
		if _, ok := p.New(platform.Env{}).(configDeleter); ok {
			deleters = append(deleters, id)
		}
	}
	for unit, want := range map[string][]string{
		"dracut/systemd/flint-checkin.service":           tablePlatforms(func(p platform.Platform) bool { return p.CheckIn != nil && p.ID != "packet" }),
		"dracut/systemd/flint-firstboot-checkin.service": {"packet"},
		"dracut/systemd/flint-sshkeys@.service":          withMetadata,
		"dracut/systemd/flint-attributes.service":        withMetadata,
		"dracut/systemd/flint-delete-config.service":     deleters,
		// Everywhere, as afterburn-network-kargs.service: where the
		// platform gives no arguments the distribution's default
		// (Fedora CoreOS: ip=auto) is written.
		"dracut/30flint/flint-network-kargs.service":   nil,
		"dracut/30flint/flint-render-ignition.service": tablePlatforms(func(p platform.Platform) bool { return p.Fragments }),
		"dracut/30flint/flint-hostname.service":        tablePlatforms(func(p platform.Platform) bool { return p.Hostname }),
		"dracut/30flint/flint-report-failure.service":  tablePlatforms(func(p platform.Platform) bool { return p.ReportFailure != nil }),
	} {
		if got := unitPlatforms(t, unit); !slices.Equal(got, want) {
			t.Errorf("%s runs on %v, the agent serves %v", unit, got, want)
		}
	}
}

// TestAttributesUnitInstall: like Afterburn's afterburn.service, the
// attributes unit can be enabled so that metadata.target pulls it in.
func TestAttributesUnitInstall(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "dracut/systemd/flint-attributes.service"))
	if err != nil {
		t.Fatal(err)
	}
	_, install, ok := strings.Cut(string(data), "\n[Install]\n")
	if !ok || !slices.Contains(strings.Split(install, "\n"), "RequiredBy=metadata.target") {
		t.Errorf("flint-attributes.service has no [Install] RequiredBy=metadata.target")
	}
}
