#!/bin/bash
# dracut module "flint-live": the initramfs of a live image that runs from
# memory (docs/live-image.md). Booted with root=tmpfs (systemd's
# fstab-generator mounts a tmpfs on /sysroot) and the image's rootfs.img as
# a further initrd, it copies the live root that rootfs.img unpacked at
# /live-root into /sysroot before flint's stages run, so the embedded
# config (images/ignition.img, /config.ign) provisions the live root, as
# Fedora CoreOS's live initramfs does with its root.squashfs
# (fedora-coreos-config, overlay.d/05core/usr/lib/dracut/modules.d/
# 20live). It also marks the image as live for flint (is-live-image: no
# root disk to remount or clean up) and for `flint pxe customize`
# (etc/coreos-live-initramfs, and etc/coreos/features.json: what the live
# system supports, the same file as the ISO's coreos/features.json).
# shellcheck disable=SC2154 # dracut sets moddir, initdir and the systemd*dir paths

# called by dracut
check() {
    return 255
}

# called by dracut
depends() {
    echo flint
    return 0
}

# called by dracut
install() {
    inst_script "$moddir/is-live-image.sh" /usr/bin/is-live-image
    inst_script "$moddir/flint-live-root.sh" /usr/libexec/flint-live-root
    inst_simple "$moddir/flint-live-root.service" "$systemdsystemunitdir/flint-live-root.service"
    mkdir -p "$initdir/$systemdsystemunitdir/initrd-root-fs.target.requires"
    ln_r "$systemdsystemunitdir/flint-live-root.service" \
        "$systemdsystemunitdir/initrd-root-fs.target.requires/flint-live-root.service"
    inst_multiple chmod cp mkdir modprobe rm
    mkdir -p "$initdir/etc/coreos"
    : > "$initdir/etc/coreos-live-initramfs"
    inst_simple "$moddir/features.json" /etc/coreos/features.json
}
