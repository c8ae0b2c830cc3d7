#!/bin/bash
# dracut module "ignitionvm": the ignition-module scenario's probe, beside
# testdata/30ignition: once provisioning is complete it prints how many
# journal entries the stages logged under Ignition's identifier and under
# flint's.
# shellcheck disable=SC2154 # dracut sets moddir, initdir and the systemd*dir paths

# called by dracut
check() {
    return 255
}

# called by dracut
depends() {
    echo ignition
    return 0
}

# called by dracut
install() {
    inst_multiple journalctl grep wc sh || {
        dfatal "ignitionvm: tools missing"
        exit 1
    }
    inst_simple "$moddir/ignitionvm-journal.service" "$systemdsystemunitdir/ignitionvm-journal.service"
    mkdir -p "$initdir/$systemdsystemunitdir/initrd.target.wants"
    ln_r "$systemdsystemunitdir/ignitionvm-journal.service" "$systemdsystemunitdir/initrd.target.wants/ignitionvm-journal.service"
}
