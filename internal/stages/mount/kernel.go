package mount

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flintboot/flint/config"
)

// Mounter calls mount(2) (sys.Mounter: on Linux the syscall, elsewhere an
// error, so that the stage runs mount(8) there).
type Mounter interface {
	Mount(source, target, fstype string, flags uintptr, data string) error
}

// kernelTypes are the formats the stage mounts with mount(2) itself: the
// config's filesystems on block devices (a virtiofs share's device is a
// tag, which mount(8) takes as it is).
var kernelTypes = []string{"ext4", "xfs", "btrfs", "vfat"}

// helperDirs are where mount(8) looks for a helper mount.<type>
// (util-linux's FS_SEARCH_PATH, /sbin:/sbin/fs.d:/sbin/fs unless built
// otherwise; libmount/src/context.c, mnt_context_prepare_helper), and the
// other directories a distro may keep one in.
var helperDirs = []string{"/sbin", "/sbin/fs.d", "/sbin/fs", "/usr/sbin", "/bin", "/usr/bin"}

// host is what the stage reads of the running system to decide on
// mount(2); the zero value is the system's own, tests fill it in.
type host struct {
	helperDirs []string                          // nil: helperDirs
	sysBlock   string                            // "": /sys/block
	devMapper  string                            // "": /dev/mapper
	mtab       string                            // "": /etc/mtab
	stat       func(string) (fs.FileInfo, error) // nil: os.Stat
}

func (h host) statFn() func(string) (fs.FileInfo, error) {
	if h.stat == nil {
		return os.Stat
	}
	return h.stat
}

// kernelMount is one mount(2) call.
type kernelMount struct {
	source, target, fstype string
	flags                  uintptr
	data                   string
}

// String is the call for the log.
func (k kernelMount) String() string {
	s := "mount(2) " + k.source + " on " + k.target + " (" + k.fstype + ")"
	if n := flagNames(k.flags); n != "" {
		s += ", flags " + n
	}
	if k.data != "" {
		s += ", data " + k.data
	}
	return s
}

// planKernelMount returns the mount(2) call that mounts f on target as
// mount(8) would mount it, or why only mount(8) can: a format mount(8)
// would not simply hand to the kernel, a helper mount.<type> it would run,
// an option it handles itself (parseOptions), a device that is not a
// block device (mount(8) sets up a loop device for a file, and takes
// other sources as they are). The source and the target are canonical,
// as mount(8) makes them (lib/canonicalize.c, canonicalize_path: every
// symlink resolved, /dev/dm-N named /dev/mapper/<name>), so that
// /proc/self/mountinfo reads the same whichever mounted it.
func planKernelMount(f config.Filesystem, target string, h host) (kernelMount, string) {
	fstype := *f.Format
	if !slices.Contains(kernelTypes, fstype) {
		return kernelMount{}, "the format " + fstype + " is not one flint mounts itself"
	}
	flags, data, why := parseOptions(f.MountOptions)
	if why != "" {
		return kernelMount{}, why
	}
	dirs := h.helperDirs
	if dirs == nil {
		dirs = helperDirs
	}
	stat := h.statFn()
	for _, dir := range dirs {
		helper := filepath.Join(dir, "mount."+fstype)
		if _, err := stat(helper); err == nil {
			return kernelMount{}, "mount(8) would run " + helper
		}
	}
	// util-linux built with --enable-libmount-support-mtab writes
	// /etc/mtab when it is a file rather than the usual link to
	// /proc/self/mounts (libmount/src/utils.c, mnt_has_regular_mtab).
	mtab := h.mtab
	if mtab == "" {
		mtab = "/etc/mtab"
	}
	if fi, err := os.Lstat(mtab); err == nil && fi.Mode().IsRegular() {
		return kernelMount{}, mtab + " is a file mount(8) may write"
	}
	source, why := canonicalDevice(f.Device, h)
	if why != "" {
		return kernelMount{}, why
	}
	realTarget, err := filepath.EvalSymlinks(target)
	if err != nil {
		return kernelMount{}, fmt.Sprintf("resolving the mountpoint: %v", err)
	}
	return kernelMount{source: source, target: realTarget, fstype: fstype, flags: flags, data: data}, ""
}

// canonicalDevice resolves dev as mount(8) does, and says why not when it
// is not a block device.
func canonicalDevice(dev string, h host) (string, string) {
	if !filepath.IsAbs(dev) {
		return "", "the device " + dev + " is not a path"
	}
	real, err := filepath.EvalSymlinks(dev)
	if err != nil {
		return "", fmt.Sprintf("resolving the device: %v", err)
	}
	fi, err := h.statFn()(real)
	if err != nil {
		return "", fmt.Sprintf("the device: %v", err)
	}
	if fi.Mode()&fs.ModeDevice == 0 || fi.Mode()&fs.ModeCharDevice != 0 {
		return "", real + " is not a block device"
	}
	if m := mapperName(real, h); m != "" {
		return m, ""
	}
	return real, ""
}

// mapperName is /dev/mapper/<name> for the block device /dev/dm-N, as
// util-linux names it (lib/canonicalize.c, canonicalize_dm_name: the
// first line of /sys/block/dm-N/dm/name less its last byte, when that
// node exists), or "".
func mapperName(real string, h host) string {
	base := filepath.Base(real)
	if !strings.HasPrefix(base, "dm-") || len(base) < 4 || base[3] < '0' || base[3] > '9' {
		return ""
	}
	sysBlock, mapper := h.sysBlock, h.devMapper
	if sysBlock == "" {
		sysBlock = "/sys/block"
	}
	if mapper == "" {
		mapper = "/dev/mapper"
	}
	raw, err := os.ReadFile(filepath.Join(sysBlock, base, "dm", "name"))
	if err != nil {
		return ""
	}
	name := string(raw)
	if i := strings.IndexByte(name, '\n'); i >= 0 {
		name = name[:i+1]
	}
	if len(name) <= 1 {
		return ""
	}
	p := filepath.Join(mapper, name[:len(name)-1])
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}
