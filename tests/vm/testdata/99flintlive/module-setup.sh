#!/bin/bash
# dracut module "flintlive": the live installer's units and generator
# (dracut/systemd/flint-installer*, which the harness copies beside this
# file) in the test initramfs, so that one image is both the live
# environment of the bare-metal install scenario (booted with
# rd.systemd.unit=flint-installer-post.target: a live system that runs
# from its initramfs) and the installed system's initramfs. Without
# coreos.inst.install_dev on the command line the generator does nothing
# and the units are never started.
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
    local unit
    inst_script "$moddir/flint-installer-generator" "$systemdutildir/system-generators/flint-installer-generator"
    for unit in flint-installer.service flint-installer.target flint-installer-post.target \
        flint-installer-reboot.service flint-installer-noreboot.service; do
        inst_simple "$moddir/$unit" "$systemdsystemunitdir/$unit" || {
            dfatal "flintlive: $unit missing"
            exit 1
        }
    done
    # flint install decodes xz images with the system's xz when it has one.
    inst_multiple -o xz
}
