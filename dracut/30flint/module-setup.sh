#!/bin/bash
# dracut module "flint": puts flint, the tools its stages run, its units,
# targets and generator into the initramfs. Read docs/distributor-notes.md
# first; dracut.modules(7) describes the four functions below.
# shellcheck disable=SC2154 # dracut sets moddir, initdir and the systemd*dir paths

# The tools flint cannot provision a machine without: the disks stage
# partitions (sgdisk, sfdisk, partx), probes and wipes (blkid, wipefs), makes
# the default filesystems (mkfs.ext4, mkswap); the files stage manages
# users and groups with shadow-utils and units with systemctl; the mount
# stage mounts. A missing one stops the build (see install) instead of
# producing an image that fails on some machine's first boot.
flint_required_tools="sgdisk sfdisk partx blkid wipefs mkfs.ext4 mkswap
    useradd usermod userdel groupadd groupmod groupdel
    systemctl mount umount modprobe udevadm"

# Tools a config may need, not every distro ships: a config that asks for
# xfs, btrfs, vfat, RAID or LUKS fails at boot with "command not found" when
# they are missing, and says so. setfiles relabels for SELinux (as
# coreos/ignition internal/exec/util/selinux.go runs it) and is skipped when
# absent; clevis binds LUKS volumes to tang/TPM2 (the distro's clevis dracut
# module brings its helpers).
flint_optional_tools="mkfs.xfs mkfs.btrfs mkfs.fat mdadm cryptsetup setfiles clevis"

# The stage units, in boot order (flint-setup-user.service first: it puts
# an installed disk's or a PXE initrd's config where fetch-offline reads it). Each is required by flint-complete.target
# on the first boot (the generator pulls that target in).
flint_stage_units="flint-setup-user.service flint-fetch-offline.service flint-neednet.service
    flint-fetch.service flint-kargs.service flint-disks.service
    flint-mount.service flint-files.service"

# The cloud agent's units that run in the initramfs (docs/agent.md): each
# is conditioned on the platforms it serves, and required by
# flint-complete.target like the stage units. More go in this list.
flint_agent_units="flint-hostname.service flint-render-ignition.service"

# Units the generator makes emergency.target want on the first boot: the
# console summary, and the report of the failure to the platforms that
# can show it (an agent unit).
flint_failure_units="flint-failure.service flint-report-failure.service"

# called by dracut
check() {
    # Only when a distro module depends on it or it is named with -a/-m:
    # flint must never land in a host's initramfs by accident.
    return 255
}

# called by dracut
depends() {
    # qemu: the fw_cfg driver for the qemu platform; network: the handler
    # (systemd-networkd, NetworkManager or network-legacy) that
    # flint-neednet.service starts when a config needs the network.
    local mods="systemd systemd-udevd systemd-journald qemu network"
    # RAID and LUKS need udev's rules for md and device-mapper: without
    # them /dev/md/NAME never appears, and cryptsetup waits for udev
    # events that never come. Those modules come with their tools.
    if find_binary dmsetup > /dev/null; then
        mods+=" dm"
    fi
    if find_binary mdadm > /dev/null; then
        mods+=" mdraid"
    fi
    echo "$mods"
    return 0
}

# called by dracut
installkernel() {
    # The filesystems, RAID levels and dm-crypt a config can ask for, so the
    # disks and mount stages work whatever the host's initramfs policy;
    # LUKS2's default cipher is aes-xts-plain64 (xts is a module, and
    # cryptsetup reaches the kernel's ciphers through AF_ALG). Missing ones
    # are skipped (instmods is optional by default).
    hostonly='' instmods ext4 xfs btrfs vfat nls_cp437 nls_iso8859-1 nls_ascii nls_utf8 \
        raid0 raid1 raid10 raid456 crc32c_generic qemu_fw_cfg \
        dm_crypt xts aesni_intel essiv af_alg algif_skcipher
    return 0
}

# flint_binary prints the flint to install: the one beside this script
# (where a package or `make install` puts it), or flint on the host's PATH.
flint_binary() {
    if [[ -x $moddir/flint ]]; then
        echo "$moddir/flint"
    else
        find_binary flint
    fi
}

# called by dracut
install() {
    local bin missing="" tool unit

    bin=$(flint_binary)
    if [[ -z $bin ]]; then
        dfatal "flint: no flint binary: put it at $moddir/flint or on PATH"
        exit 1
    fi
    # Check every required tool first, so the message lists them all.
    for tool in $flint_required_tools; do
        find_binary "$tool" > /dev/null || missing+=" $tool"
    done
    if [[ -n $missing ]]; then
        dfatal "flint: required tools missing on this host:$missing (install them, see docs/distributor-notes.md)"
        exit 1
    fi

    inst_binary "$bin" /usr/bin/flint || {
        dfatal "flint: could not install $bin"
        exit 1
    }
    # shellcheck disable=SC2086 # the lists are meant to split into words
    # flint-setup-user and flint-firstboot-done copy and remove a config
    # with these (dracut's base module brings most, not all of them).
    inst_multiple $flint_required_tools journalctl sed sh cat rm ls cp mv chmod mkdir rmdir sleep tr || {
        dfatal "flint: could not install the required tools"
        exit 1
    }
    # shellcheck disable=SC2086
    inst_multiple -o $flint_optional_tools

    inst_script "$moddir/flint-neednet.sh" /usr/libexec/flint-neednet
    inst_script "$moddir/flint-setup-user.sh" /usr/libexec/flint-setup-user
    inst_script "$moddir/flint-failure.sh" /usr/libexec/flint-failure
    inst_script "$moddir/flint-firstboot-done.sh" /usr/libexec/flint-firstboot-done
    inst_script "$moddir/flint-generator" "$systemdutildir/system-generators/flint-generator"

    for unit in $flint_stage_units $flint_agent_units \
        $flint_failure_units flint-remount-sysroot.service flint-console.service \
        flint-network-kargs.service \
        flint-firstboot-done.service \
        flint-complete.target flint-diskful.target \
        flint-subsequent.target flint-diskful-subsequent.target; do
        inst_simple "$moddir/$unit" "$systemdsystemunitdir/$unit" || {
            dfatal "flint: could not install $unit"
            exit 1
        }
    done

    # flint-complete.target requires every stage: if one fails or is
    # missing, the target fails and the boot does not go on silently.
    mkdir -p "$initdir/$systemdsystemunitdir/flint-complete.target.requires" \
        "$initdir/$systemdsystemunitdir/flint-diskful.target.requires"
    for unit in $flint_stage_units $flint_agent_units; do
        ln_r "$systemdsystemunitdir/$unit" \
            "$systemdsystemunitdir/flint-complete.target.requires/$unit"
    done
    # Only a machine with a root disk remounts it (a live image has none).
    ln_r "$systemdsystemunitdir/flint-remount-sysroot.service" \
        "$systemdsystemunitdir/flint-diskful.target.requires/flint-remount-sysroot.service"
}
