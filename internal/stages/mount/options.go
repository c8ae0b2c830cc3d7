package mount

import (
	"slices"
	"strings"
)

// The kernel's mount flags (linux/mount.h; the values are the Linux ABI,
// checked against golang.org/x/sys/unix by options_linux_test.go). They are
// written out here so that the options parse the same on every system, for
// the tests and flint's dry runs.
const (
	msRdonly      = 0x1
	msNosuid      = 0x2
	msNodev       = 0x4
	msNoexec      = 0x8
	msSynchronous = 0x10
	msMandlock    = 0x40
	msDirsync     = 0x80
	msNoatime     = 0x400
	msNodiratime  = 0x800
	msSilent      = 0x8000
	msRelatime    = 0x200000
	msIVersion    = 0x800000
	msStrictatime = 0x1000000
	msLazytime    = 0x2000000
)

// kernelFlag is one option of util-linux libmount's map of the kernel's
// filesystem-independent flags (libmount/src/optmap.c, linux_flags_map):
// the option sets flag, or clears it when clear.
type kernelFlag struct {
	name  string
	flag  uintptr
	clear bool
}

// kernelFlags are the flags of libmount's map that mount(8) passes to
// mount(2) as they are in every build: the ones the map has under #ifdef
// (MS_LAZYTIME, MS_I_VERSION, ...) are in both glibc's and musl's
// <sys/mount.h>. An option that clears a flag ("rw", "suid", "atime")
// clears it in what the options before it set; alone it leaves the flag
// word at 0, as mount(8) does (`strace mount -o atime` shows flags 0).
var kernelFlags = []kernelFlag{
	{"ro", msRdonly, false},
	{"rw", msRdonly, true},
	{"nosuid", msNosuid, false},
	{"suid", msNosuid, true},
	{"nodev", msNodev, false},
	{"dev", msNodev, true},
	{"noexec", msNoexec, false},
	{"exec", msNoexec, true},
	{"sync", msSynchronous, false},
	{"async", msSynchronous, true},
	{"dirsync", msDirsync, false},
	{"mand", msMandlock, false},
	{"nomand", msMandlock, true},
	{"noatime", msNoatime, false},
	{"atime", msNoatime, true},
	{"nodiratime", msNodiratime, false},
	{"diratime", msNodiratime, true},
	{"relatime", msRelatime, false},
	{"norelatime", msRelatime, true},
	{"strictatime", msStrictatime, false},
	{"nostrictatime", msStrictatime, true},
	{"lazytime", msLazytime, false},
	{"nolazytime", msLazytime, true},
	{"iversion", msIVersion, false},
	{"noiversion", msIVersion, true},
	{"silent", msSilent, false},
	{"loud", msSilent, true},
}

// mount8Options are the options mount(8) handles itself, or whose meaning
// depends on how util-linux was built or on the system it runs on: the
// rest of libmount's kernel map (bind mounts, remounts, propagation, and
// the flags only some builds know: "nosymfollow", "nosub"), its userspace
// map (libmount/src/optmap.c, userspace_opts_map, 2.38 to 2.41: they are
// never passed to the kernel, some do something in mount(8): a loop
// device, a helper, utab), and the filesystem options libmount rewrites
// before mount(2) (context_mount.c, fix_optstr: the SELinux contexts,
// dropped or translated; Smack's, dropped without smackfs). Their
// prefixes "x-", "X-" and "verity." are in mount8Prefixes.
var mount8Options = []string{
	"remount", "bind", "rbind", "move", "sub", "nosub", "symfollow", "nosymfollow",
	"unbindable", "runbindable", "private", "rprivate", "slave", "rslave", "shared",
	"rshared", "auto", "noauto", "user", "nouser", "users", "nousers", "owner", "noowner",
	"group", "nogroup", "_netdev", "comment", "loop", "offset", "sizelimit", "encryption",
	"nofail", "uhelper", "helper", "context", "fscontext", "defcontext", "rootcontext",
	"seclabel", "smackfsdef", "smackfsfloor", "smackfshat", "smackfsroot",
	"smackfstransmute",
}

// mount8Prefixes are the prefixes of libmount's userspace options.
var mount8Prefixes = []string{"x-", "X-", "verity."}

// parseOptions turns a filesystem's mountOptions into mount(2)'s flags and
// data as mount(8) would (libmount/src/optstr.c, mnt_split_optstr and
// mnt_optstr_get_flags): the options joined by commas are read one by one,
// in order; a kernel flag sets or clears its bit (the last one wins:
// "rw,ro" is read-only), "defaults" is dropped, and every other option
// goes into data as given, in order, for the filesystem to parse. why is
// not "" when mount(8) must mount instead: an option it handles itself,
// one it rewrites, or a string it would split differently (quotes, empty
// items).
func parseOptions(opts []string) (flags uintptr, data string, why string) {
	if len(opts) == 0 {
		return 0, "", ""
	}
	var fsOpts []string
	for _, o := range strings.Split(strings.Join(opts, ","), ",") {
		if o == "" {
			return 0, "", "an empty mount option"
		}
		if strings.Contains(o, `"`) {
			return 0, "", "the quoted mount option " + o
		}
		name, value, hasValue := strings.Cut(o, "=")
		if name == "" {
			return 0, "", "the mount option " + o + " has no name"
		}
		if f, ok := lookupFlag(name); ok {
			if hasValue {
				// libmount passes "ro=1" to the filesystem, and
				// its newer versions read "ro=recursive" itself.
				return 0, "", "the kernel flag " + name + " with a value"
			}
			if f.clear {
				flags &^= f.flag
			} else {
				flags |= f.flag
			}
			continue
		}
		if name == "defaults" && !hasValue {
			continue
		}
		if name == "defaults" || slices.Contains(mount8Options, name) || hasAnyPrefix(name, mount8Prefixes) {
			return 0, "", "the mount option " + o + " is mount(8)'s"
		}
		// libmount turns a user or group name into its number
		// (optstr.c, mnt_optstr_fix_uid, mnt_optstr_fix_gid); a value
		// that starts with a digit it leaves as it is.
		if (name == "uid" || name == "gid") && (value == "" || value[0] < '0' || value[0] > '9') {
			return 0, "", "the mount option " + o + " names no number"
		}
		fsOpts = append(fsOpts, o)
	}
	return flags, strings.Join(fsOpts, ","), ""
}

func lookupFlag(name string) (kernelFlag, bool) {
	for _, f := range kernelFlags {
		if f.name == name {
			return f, true
		}
	}
	return kernelFlag{}, false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// flagNames renders flags as the options that set them ("ro,noatime"),
// for the log; "" for none.
func flagNames(flags uintptr) string {
	var names []string
	for _, f := range kernelFlags {
		if !f.clear && flags&f.flag != 0 {
			names = append(names, f.name)
		}
	}
	return strings.Join(names, ",")
}
