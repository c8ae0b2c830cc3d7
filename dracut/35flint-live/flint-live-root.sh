#!/bin/sh
# flint-live-root: copies the live root (rootfs.img's live-root/, unpacked
# by the kernel into the initramfs) into /sysroot, and frees the copy the
# initramfs holds. NetworkManager keyfiles embedded in the image
# (`flint iso network embed`, `--network-keyfile`: etc/coreos-firstboot-network/
# of images/ignition.img) go to the live root's NetworkManager directory,
# where `flint install --copy-network` takes them from, as
# fedora-coreos-config's coreos-copy-firstboot-network does for the live
# system.
#
# The FLINT_LIVE_ROOT_* variables move its files for tests.
set -eu

src=${FLINT_LIVE_ROOT_SRC:-/live-root}
dst=${FLINT_LIVE_ROOT_DEST:-/sysroot}
keyfiles=${FLINT_LIVE_ROOT_KEYFILES:-/etc/coreos-firstboot-network}

if [ ! -x "$src/sbin/init" ]; then
    echo "flint-live-root: no live root at $src (boot the live image's rootfs.img as a further initrd after its initrd.img)"
    exit 1
fi
cp -a "$src/." "$dst/"
rm -rf "$src"
echo "flint-live-root: the live root is in memory at $dst"
# The live root has no kernel modules of its own: the filesystems an OS
# image's boot and EFI partitions have, which the installer mounts, are
# loaded now and stay loaded after switch-root.
modprobe -a -q ext4 vfat xfs || true
if [ -d "$keyfiles" ]; then
    nm=$dst/etc/NetworkManager/system-connections
    mkdir -p "$nm"
    cp -a "$keyfiles/." "$nm/"
    chmod 0600 "$nm"/*
    echo "flint-live-root: the embedded network keyfiles are in $nm"
fi
