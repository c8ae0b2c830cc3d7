// Package install writes an OS image and its config to a disk, as
// coreos-installer's install command does, for a bare-metal install from
// a live environment: flint install.
//
// The config is read and validated with flint's validator before anything
// else; the image (raw, gzip, xz or zstd, told by its content) is checked
// against an OpenPGP detached signature (by the system's gpg, as
// coreos-installer checks it) or a digest over the file as given, while
// it streams from a file or URL through the decompressor to
// the disk in bounded memory. The image's first MiB, where its partition
// table is, is written only once the whole file has passed its checks, so
// a bad or cut-short image leaves a disk with no partition table.
// Partitions the user keeps (--save-partlabel, --save-partindex) are
// merged into the image's table. Last, the filesystem labelled "boot" is
// mounted and edited at coreos-installer's paths: the config in
// ignition/config.ign, the first-boot stamp, the BLS entry's kernel
// arguments, the first boot's network keyfiles.
package install
