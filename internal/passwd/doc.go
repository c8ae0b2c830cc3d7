// Package passwd reads a target root's user and group databases and builds
// the shadow-utils command lines that change them, the way Ignition
// does (coreos/ignition internal/exec/util/passwd.go):
// groupadd/groupmod/groupdel and useradd/usermod/userdel, each with --root
// so the tools themselves confine their writes to the target.
//
// Names are looked up by reading the databases as files: /etc/passwd and
// /etc/group first, then the alternate /usr/lib/passwd and /usr/lib/group
// (nss-altfiles, used by image-based distros for system accounts). The
// reference instead chroots into the target and asks its NSS through cgo;
// flint is built without cgo and never chroots, and the files are what the
// shadow tools themselves edit, so reading them gives the same answers for
// every account the config can create.
//
// Family: target-side libraries (internal/README.md).
package passwd
