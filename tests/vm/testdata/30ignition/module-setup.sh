#!/bin/bash
# dracut module "ignition", as a distro that keeps Ignition's module would
# lay it out (coreos/ignition dracut/30ignition): Ignition's unit and
# target names, each stage run as `/usr/bin/ignition --root=/sysroot
# --platform=${PLATFORM_ID} --stage=S`, Ignition's generator's job, and
# /usr/bin/ignition a symlink to flint. The units are written for this
# test from Ignition's documented command lines; nothing of flint's own
# module (dracut/30flint) is in the image. The harness copies the flint
# binary beside this script.
# shellcheck disable=SC2154 # dracut sets moddir, initdir and the systemd*dir paths

# called by dracut
check() {
    return 255
}

# called by dracut
depends() {
    # The network comes from the kernel command line (ip=dhcp), as it
    # does for a distro whose glue starts it when the config needs it.
    echo systemd systemd-udevd systemd-journald qemu systemd-networkd
    return 0
}

# called by dracut
installkernel() {
    hostonly='' instmods ext4 vfat qemu_fw_cfg
    return 0
}

# called by dracut
install() {
    inst_binary "$moddir/flint" /usr/bin/flint || {
        dfatal "ignition: no flint binary beside module-setup.sh"
        exit 1
    }
    ln_r /usr/bin/flint /usr/bin/ignition
    inst_multiple sfdisk blkid wipefs mkfs.ext4 mkswap useradd usermod userdel groupadd groupmod groupdel \
        systemctl mount umount modprobe udevadm sh cat || {
        dfatal "ignition: tools missing"
        exit 1
    }
    inst_script "$moddir/ignition-generator" "$systemdutildir/system-generators/ignition-generator"
    local unit
    for unit in ignition-fetch-offline.service ignition-fetch.service ignition-kargs.service \
        ignition-disks.service ignition-mount.service ignition-files.service \
        ignition-remount-sysroot.service ignition-complete.target ignition-diskful.target \
        ignition-subsequent.target ignition-diskful-subsequent.target; do
        inst_simple "$moddir/$unit" "$systemdsystemunitdir/$unit"
    done
    mkdir -p "$initdir/$systemdsystemunitdir/ignition-complete.target.requires" \
        "$initdir/$systemdsystemunitdir/ignition-diskful.target.requires"
    for unit in ignition-fetch-offline.service ignition-fetch.service ignition-kargs.service \
        ignition-disks.service ignition-mount.service ignition-files.service; do
        ln_r "$systemdsystemunitdir/$unit" "$systemdsystemunitdir/ignition-complete.target.requires/$unit"
    done
    ln_r "$systemdsystemunitdir/ignition-remount-sysroot.service" \
        "$systemdsystemunitdir/ignition-diskful.target.requires/ignition-remount-sysroot.service"
}
