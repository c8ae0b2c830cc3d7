package mount

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/blockdev"
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
	helperDirs []string        // nil: helperDirs
	mtab       string          // "": /etc/mtab
	kernel     blockdev.Kernel // the zero value reads /sys and /dev
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
	for _, dir := range dirs {
		helper := filepath.Join(dir, "mount."+fstype)
		if _, err := os.Stat(helper); err == nil {
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

// canonicalDevice resolves dev as mount(8) does (blockdev.Kernel.Resolve,
// MapperNode), and says why not when it is not a block device.
func canonicalDevice(dev string, h host) (string, string) {
	if !filepath.IsAbs(dev) {
		return "", "the device " + dev + " is not a path"
	}
	real, err := h.kernel.Resolve(dev)
	switch {
	case errors.Is(err, blockdev.ErrNotBlockDevice):
		return "", dev + " is not a block device"
	case err != nil:
		return "", fmt.Sprintf("the device: %v", err)
	}
	if m := h.kernel.MapperNode(real); m != "" {
		return m, ""
	}
	return real, ""
}
