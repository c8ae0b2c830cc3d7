package stages

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFlag(t *testing.T) {
	for _, tc := range []struct {
		state, name, want string
	}{
		{"/run/ignition/state", "kargs-wanted", "/run/ignition/kargs-wanted"},
		{"/tmp/x/run/state", "root-formatted", "/tmp/x/run/root-formatted"},
	} {
		if got := (Files{StateFile: tc.state}).Flag(tc.name); got != tc.want {
			t.Errorf("Files{StateFile: %q}.Flag(%q) = %q, want %q", tc.state, tc.name, got, tc.want)
		}
	}
}

// WriteFlag makes the flag's directory, and writing it again (a stage
// run twice) is no failure.
func TestWriteFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "ignition", "kargs-wanted")
	for i := range 2 {
		if err := WriteFlag(path); err != nil {
			t.Fatalf("WriteFlag(%s) #%d = %v", path, i+1, err)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Errorf("WriteFlag(%s) left %v, %v; want an empty file", path, fi, err)
	}
}
