//go:build unix

package rootfs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("n", 240)
	files := map[string]bool{ // name: removed
		".motd.flint-0123456789ab":    true,  // beside a target written
		".hosts.flint-a1b2c3d4e5f6":   true,  // another one
		".other.flint-0123456789ab":   false, // not a target of this run
		".motd.flint-0123456789AB":    false, // upper case: not flint's
		".motd.flint-0123456789a":     false, // 11 digits
		".motd.flint-0123456789abc":   false, // 13 digits
		"motd.flint-0123456789ab":     false, // no leading dot
		".motd.flint-0123456789ab~":   false, // a suffix
		".flint-0123456789ab":         true,  // the short form, for the long name
		".motd.flint-xyz456789abc":    false, // not hex
		".motd.flint-ffffffffffff.d":  false, // not at the end
		"motd":                        false, // the target itself
		"." + long + ".flint-000000a": false, // too short a random part
	}
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, "etc", name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A directory named like a leftover is not flint's: it stays.
	os.Mkdir(filepath.Join(dir, "etc", ".hosts.flint-000000000000"), 0o755)
	// Leftovers in a directory flint does not write to stay.
	os.MkdirAll(filepath.Join(dir, "var"), 0o755)
	os.WriteFile(filepath.Join(dir, "var", ".motd.flint-0123456789ab"), nil, 0o600)

	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	removed, err := r.RemoveStaleTemps("/etc", []string{"motd", "hosts", long})
	if err != nil {
		t.Fatalf("RemoveStaleTemps = %v", err)
	}
	var want []string
	for name, gone := range files {
		if gone {
			want = append(want, name)
		}
		_, err := os.Lstat(filepath.Join(dir, "etc", name))
		if gone != os.IsNotExist(err) {
			t.Errorf("%s: removed = %v, want %v", name, os.IsNotExist(err), gone)
		}
	}
	slices.Sort(removed)
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("RemoveStaleTemps = %q, want %q", removed, want)
	}
	for _, p := range []string{"etc/.hosts.flint-000000000000", "var/.motd.flint-0123456789ab"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if got, err := r.RemoveStaleTemps("/missing/dir", []string{"motd"}); err != nil || got != nil {
		t.Errorf("RemoveStaleTemps(missing dir) = %q, %v; want nothing", got, err)
	}
}

// TestCreateTempNamesAreStale checks that what CreateTemp makes is what
// RemoveStaleTemps removes: the pattern is one, in both directions.
func TestCreateTempNamesAreStale(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	long := strings.Repeat("x", 250)
	for _, name := range []string{"motd", long} {
		tmp, err := r.CreateTemp("/etc/" + name)
		if err != nil {
			t.Fatal(err)
		}
		// A crash: the file stays, the process is gone.
		removed, err := r.RemoveStaleTemps("/etc", []string{name})
		if err != nil || len(removed) != 1 {
			t.Errorf("RemoveStaleTemps after CreateTemp(%.10s…) = %q, %v; want the temporary file", name, removed, err)
		}
		tmp.Abort()
	}
}

func TestTempRewind(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tmp, err := r.CreateTemp("/f")
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Abort()
	tmp.Write([]byte("kept "))
	off, err := tmp.Offset()
	if err != nil || off != 5 {
		t.Fatalf("Offset = %d, %v; want 5", off, err)
	}
	tmp.Write([]byte("broken transfer"))
	if err := tmp.Rewind(off); err != nil {
		t.Fatal(err)
	}
	tmp.Write([]byte("whol"))
	// The offset follows writes and rewinds without asking the kernel:
	// a second broken transfer goes back to where it started.
	if off, err = tmp.Offset(); err != nil || off != 9 {
		t.Fatalf("Offset after Rewind(5) and 4 bytes = %d, %v; want 9", off, err)
	}
	tmp.Write([]byte("ly broken"))
	if err := tmp.Rewind(off); err != nil {
		t.Fatal(err)
	}
	tmp.Write([]byte("e"))
	id, err := tmp.ID()
	if err != nil {
		t.Fatal(err)
	}
	if err := tmp.Commit(0o644, -1, -1); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "f"))
	if string(got) != "kept whole" {
		t.Errorf("file = %q, want %q", got, "kept whole")
	}
	info, err := r.Lstat("/f")
	if err != nil || info.ID() != id {
		t.Errorf("Lstat(/f).ID() = %v, %v; want the temporary file's %v", info.ID(), err, id)
	}
}
