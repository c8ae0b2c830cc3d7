#!/bin/bash
# dracut module "flintvm": the VM tests' probes, added to the test
# initramfs beside flint's own module. Each unit runs only when its kernel
# argument is given, so the image behaves as a distro's would otherwise.
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
    inst_multiple mdadm cryptsetup blkid cat sed ls || {
        dfatal "flintvm: tools missing"
        exit 1
    }
    inst_script "$moddir/flintvm-check.sh" /usr/libexec/flintvm-check
    inst_script "$moddir/flintvm-netunits.sh" /usr/libexec/flintvm-netunits
    local unit
    mkdir -p "$initdir/$systemdsystemunitdir/initrd.target.wants"
    for unit in flintvm-journal.service flintvm-check.service flintvm-alias.service flintvm-netunits.service; do
        inst_simple "$moddir/$unit" "$systemdsystemunitdir/$unit"
        ln_r "$systemdsystemunitdir/$unit" "$systemdsystemunitdir/initrd.target.wants/$unit"
    done
    # A drop-in under Ignition's name for flint's files stage (flintvm.alias).
    inst_simple "$moddir/flintvm-dropin.conf" "$systemdsystemunitdir/ignition-files.service.d/50-flintvm.conf"
    mkdir -p "$initdir/$systemdsystemunitdir/emergency.target.wants"
    inst_simple "$moddir/flintvm-emergency.service" "$systemdsystemunitdir/flintvm-emergency.service"
    ln_r "$systemdsystemunitdir/flintvm-emergency.service" "$systemdsystemunitdir/emergency.target.wants/flintvm-emergency.service"
}
