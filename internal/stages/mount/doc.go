// Package mount is the mount stage (coreos/ignition
// internal/exec/stages/mount/mount.go): it mounts every filesystem of the
// config that has a path under the target root, the shallowest first, so
// that the files stage writes into them. Every existing component of a
// mountpoint must be a real directory: a symlink could send the mount (and
// every file written under it) outside the root, so the stage refuses it.
// Missing mountpoints are created 0755 and returned, for the state, so that
// the files stage can hand them to the users whose homes they are.
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
