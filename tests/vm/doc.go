// Package vm is flint's third test tier: QEMU (software emulation, no KVM
// needed) boots the host's Debian kernel with a dracut initramfs built
// from the repository's dracut/30flint module and a freshly built flint,
// on disk images the tests make themselves (a busybox root whose init
// prints a marker and powers off), and the tests read the disks back on
// the host afterwards. The tests are in *_test.go; see README.md.
package vm
