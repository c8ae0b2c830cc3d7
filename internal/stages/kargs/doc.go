// Package kargs is the kargs stage: it makes the kernel command line of the
// installed system match the config's kernelArguments, before the disks
// stage, and asks for a reboot when it changed anything, so that the first
// boot continues with the arguments the config asked for.
//
// Ignition leaves all of this to a distro binary, ignition-kargs-helper
// (coreos/ignition internal/exec/stages/kargs/kargs.go), and most distros
// ship none. flint does it itself for systems that boot through Boot Loader
// Specification entries (systemd-boot, GRUB with blscfg, ostree): it mounts
// the filesystem labelled "boot" read-write in a temporary directory, edits
// the options line of every loader/entries/*.conf atomically, unmounts it,
// and, when an entry changed, writes a flag file and (only in the initramfs)
// runs `systemctl reboot`. Applying the same config again changes nothing,
// so the boot after the reboot goes on.
//
// A distro with its own way (grubenv, zipl, rpm-ostree) names a helper
// instead; it gets Ignition's argv (--should-exist A …
// --should-not-exist B …) and must apply the arguments and reboot itself.
//
// The editing rules are those of Ignition's example helper: an entry may be
// several arguments ("console=ttyS0 console=tty0", an ordered group); a
// shouldExist entry is appended unless its arguments already appear, in
// that order, next to each other; every such run of a shouldNotExist
// entry is removed. Arguments are compared as whole words, with double
// quotes grouping words the way the kernel does (foo="a b" is one).
//
// Family: boot stages (internal/README.md).
package kargs
