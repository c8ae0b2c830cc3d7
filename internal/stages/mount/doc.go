// Package mount is the mount stage (coreos/ignition
// internal/exec/stages/mount/mount.go): it mounts every filesystem of the
// config that has a path under the target root, the shallowest first, so
// that the files stage writes into them. Every existing component of a
// mountpoint must be a real directory: a symlink could send the mount (and
// every file written under it) outside the root, so the stage refuses it.
// Missing mountpoints are created 0755 and returned, for the state, so that
// the files stage can hand them to the users whose homes they are.
//
// Ignition runs mount(8) for every filesystem; the stage calls mount(2)
// itself when that is all mount(8) would do (kernel.go: an ext4, xfs,
// btrfs or vfat filesystem on a block device, no helper mount.<type>, and
// options that are kernel flags or the filesystem's own, read as
// util-linux's libmount reads them, options.go), with the device and the
// mountpoint resolved as mount(8) resolves them, so that the mount table
// reads the same. Everything else, and whatever mount(2) refuses, goes to
// mount(8), whose error is the one reported.
//
// When the target has SELinux enabled, the created mountpoints and the
// roots of freshly made filesystems are relabelled (setfiles), since
// nothing else will label them before the first boot.
//
// The umount stage undoes the mounts in reverse order; Mountable gives both
// stages the same list.
//
// Family: boot stages (internal/README.md).
package mount
