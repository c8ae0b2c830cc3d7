package mount

import (
	"strings"
	"testing"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		opts      []string
		wantFlags uintptr
		wantData  string
	}{
		{nil, 0, ""},
		{[]string{"ro"}, msRdonly, ""},
		{[]string{"rw"}, 0, ""},
		{[]string{"ro", "rw"}, 0, ""},
		{[]string{"rw,ro"}, msRdonly, ""},
		{[]string{"nosuid"}, msNosuid, ""},
		{[]string{"nosuid", "suid"}, 0, ""},
		{[]string{"nodev"}, msNodev, ""},
		{[]string{"nodev", "dev"}, 0, ""},
		{[]string{"noexec"}, msNoexec, ""},
		{[]string{"noexec", "exec"}, 0, ""},
		{[]string{"sync"}, msSynchronous, ""},
		{[]string{"sync", "async"}, 0, ""},
		{[]string{"dirsync"}, msDirsync, ""},
		{[]string{"mand"}, msMandlock, ""},
		{[]string{"mand", "nomand"}, 0, ""},
		{[]string{"noatime"}, msNoatime, ""},
		{[]string{"noatime", "atime"}, 0, ""},
		{[]string{"nodiratime"}, msNodiratime, ""},
		{[]string{"nodiratime", "diratime"}, 0, ""},
		{[]string{"relatime"}, msRelatime, ""},
		{[]string{"relatime", "norelatime"}, 0, ""},
		{[]string{"strictatime"}, msStrictatime, ""},
		{[]string{"strictatime", "nostrictatime"}, 0, ""},
		{[]string{"lazytime"}, msLazytime, ""},
		{[]string{"lazytime", "nolazytime"}, 0, ""},
		{[]string{"iversion"}, msIVersion, ""},
		{[]string{"iversion", "noiversion"}, 0, ""},
		{[]string{"silent"}, msSilent, ""},
		{[]string{"silent", "loud"}, 0, ""},
		{[]string{"defaults"}, 0, ""},
		{[]string{"defaults", "noatime"}, msNoatime, ""},
		// What the kernel does not know goes to the filesystem as given,
		// in order, around the flags (as `strace mount -o
		// user_xattr,ro,commit=5` shows mount(8) passing them).
		{[]string{"user_xattr", "ro", "commit=5"}, msRdonly, "user_xattr,commit=5"},
		{[]string{"discard,noatime", "errors=remount-ro"}, msNoatime, "discard,errors=remount-ro"},
		{[]string{"subvol=/@home", "compress=zstd:3"}, 0, "subvol=/@home,compress=zstd:3"},
		{[]string{"flint_not_an_option"}, 0, "flint_not_an_option"},
		{[]string{"RO"}, 0, "RO"},
		{[]string{"uid=1000", "gid=100", "umask=077"}, 0, "uid=1000,gid=100,umask=077"},
		{[]string{"name="}, 0, "name="},
		{[]string{"nodev", "nosuid", "noexec", "relatime"}, msNodev | msNosuid | msNoexec | msRelatime, ""},
	}
	for _, tt := range tests {
		flags, data, why := parseOptions(tt.opts)
		if why != "" || flags != tt.wantFlags || data != tt.wantData {
			t.Errorf("parseOptions(%q) = %#x, %q, %q, want %#x, %q, \"\"", tt.opts, flags, data, why, tt.wantFlags, tt.wantData)
		}
	}
}

// TestParseOptionsMount8: the options mount(8) must see, each with the
// reason the log gives.
func TestParseOptionsMount8(t *testing.T) {
	tests := []struct {
		opts    []string
		wantWhy string
	}{
		{[]string{"x-systemd.device-timeout=0"}, "the mount option x-systemd.device-timeout=0 is mount(8)'s"},
		{[]string{"X-mount.mkdir"}, "X-mount.mkdir is mount(8)'s"},
		{[]string{"noatime", "_netdev"}, "_netdev is mount(8)'s"},
		{[]string{"comment=systemd.automount"}, "comment=systemd.automount is mount(8)'s"},
		{[]string{"user"}, "user is mount(8)'s"},
		{[]string{"user=core"}, "user=core is mount(8)'s"},
		{[]string{"users"}, "users is mount(8)'s"},
		{[]string{"nouser"}, "nouser is mount(8)'s"},
		{[]string{"owner"}, "owner is mount(8)'s"},
		{[]string{"group"}, "group is mount(8)'s"},
		{[]string{"auto"}, "auto is mount(8)'s"},
		{[]string{"noauto"}, "noauto is mount(8)'s"},
		{[]string{"nofail"}, "nofail is mount(8)'s"},
		{[]string{"loop"}, "loop is mount(8)'s"},
		{[]string{"loop=/dev/loop3"}, "loop=/dev/loop3 is mount(8)'s"},
		{[]string{"offset=512"}, "offset=512 is mount(8)'s"},
		{[]string{"sizelimit=1M"}, "sizelimit=1M is mount(8)'s"},
		{[]string{"encryption=aes"}, "encryption=aes is mount(8)'s"},
		{[]string{"helper=udisks2"}, "helper=udisks2 is mount(8)'s"},
		{[]string{"uhelper=udisks2"}, "uhelper=udisks2 is mount(8)'s"},
		{[]string{"verity.roothash=abc"}, "verity.roothash=abc is mount(8)'s"},
		{[]string{"bind"}, "bind is mount(8)'s"},
		{[]string{"rbind"}, "rbind is mount(8)'s"},
		{[]string{"remount"}, "remount is mount(8)'s"},
		{[]string{"move"}, "move is mount(8)'s"},
		{[]string{"private"}, "private is mount(8)'s"},
		{[]string{"rshared"}, "rshared is mount(8)'s"},
		{[]string{"nosymfollow"}, "nosymfollow is mount(8)'s"},
		{[]string{"nosub"}, "nosub is mount(8)'s"},
		{[]string{"context=system_u:object_r:var_t:s0"}, "context=system_u:object_r:var_t:s0 is mount(8)'s"},
		{[]string{"rootcontext=system_u:object_r:var_t:s0"}, "is mount(8)'s"},
		{[]string{"seclabel"}, "seclabel is mount(8)'s"},
		{[]string{"smackfsroot=*"}, "smackfsroot=* is mount(8)'s"},
		{[]string{"defaults=1"}, "defaults=1 is mount(8)'s"},
		{[]string{"uid=core"}, "the mount option uid=core names no number"},
		{[]string{"gid=wheel"}, "the mount option gid=wheel names no number"},
		{[]string{"uid=useruid"}, "uid=useruid names no number"},
		{[]string{"uid="}, "uid= names no number"},
		{[]string{"ro=1"}, "the kernel flag ro with a value"},
		{[]string{"ro=recursive"}, "the kernel flag ro with a value"},
		{[]string{"noatime="}, "the kernel flag noatime with a value"},
		{[]string{`context="system_u:object_r:var_t:s0,c1"`}, "quoted"},
		{[]string{""}, "an empty mount option"},
		{[]string{"noatime,,nodev"}, "an empty mount option"},
		{[]string{"=x"}, "has no name"},
	}
	for _, tt := range tests {
		flags, data, why := parseOptions(tt.opts)
		if !strings.Contains(why, tt.wantWhy) || flags != 0 || data != "" {
			t.Errorf("parseOptions(%q) = %#x, %q, %q, want mount(8): %q", tt.opts, flags, data, why, tt.wantWhy)
		}
	}
}

func TestFlagNames(t *testing.T) {
	tests := []struct {
		flags uintptr
		want  string
	}{
		{0, ""},
		{msRdonly, "ro"},
		{msRdonly | msNoatime | msNodev, "ro,nodev,noatime"},
	}
	for _, tt := range tests {
		if got := flagNames(tt.flags); got != tt.want {
			t.Errorf("flagNames(%#x) = %q, want %q", tt.flags, got, tt.want)
		}
	}
}
