package mount

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestFlagValues: the flags written out in options.go are the kernel's.
func TestFlagValues(t *testing.T) {
	tests := []struct {
		name      string
		got, want uintptr
	}{
		{"MS_RDONLY", msRdonly, unix.MS_RDONLY},
		{"MS_NOSUID", msNosuid, unix.MS_NOSUID},
		{"MS_NODEV", msNodev, unix.MS_NODEV},
		{"MS_NOEXEC", msNoexec, unix.MS_NOEXEC},
		{"MS_SYNCHRONOUS", msSynchronous, unix.MS_SYNCHRONOUS},
		{"MS_MANDLOCK", msMandlock, unix.MS_MANDLOCK},
		{"MS_DIRSYNC", msDirsync, unix.MS_DIRSYNC},
		{"MS_NOATIME", msNoatime, unix.MS_NOATIME},
		{"MS_NODIRATIME", msNodiratime, unix.MS_NODIRATIME},
		{"MS_SILENT", msSilent, unix.MS_SILENT},
		{"MS_RELATIME", msRelatime, unix.MS_RELATIME},
		{"MS_I_VERSION", msIVersion, unix.MS_I_VERSION},
		{"MS_STRICTATIME", msStrictatime, unix.MS_STRICTATIME},
		{"MS_LAZYTIME", msLazytime, unix.MS_LAZYTIME},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %#x, want %#x", tt.name, tt.got, tt.want)
		}
	}
}
