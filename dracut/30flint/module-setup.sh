#!/bin/bash
# dracut module "flint": puts flint, the tools its stages run, its units,
# targets and generator into the initramfs. Read docs/distributor-notes.md
# first; dracut.modules(7) describes the four functions below.
# shellcheck disable=SC2154 # dracut sets moddir, initdir and the systemd*dir paths

# The tools flint cannot provision a machine without: the disks stage
# reads partition tables (sfdisk; it writes them itself, internal/gpt, and
# tells the kernel with BLKPG, so neither sgdisk nor partx is needed),
# probes and wipes (blkid, wipefs), makes
# the default filesystems (mkfs.ext4, mkswap); the files stage manages
# users and groups with shadow-utils and units with systemctl; the mount
# stage mounts. A missing one stops the build (see install) instead of
# producing an image that fails on some machine's first boot.
flint_required_tools="sfdisk blkid wipefs mkfs.ext4 mkswap
    useradd usermod userdel groupadd groupmod groupdel
    systemctl mount umount modprobe udevadm"

# Tools a config may need, not every distro ships: a config that asks for
# xfs, btrfs, vfat, RAID or LUKS fails at boot with "command not found" when
# they are missing, and says so. setfiles relabels for SELinux (as
# coreos/ignition internal/exec/util/selinux.go runs it) and is skipped when
# absent; clevis binds LUKS volumes to tang/TPM2 (what binding runs besides
# is flint_clevis_bind_tools).
flint_optional_tools="mkfs.xfs mkfs.btrfs mkfs.fat mdadm cryptsetup setfiles clevis"

# What `clevis luks bind` runs, which the distro's clevis dracut module
# (made for unlocking) does not bring: the encrypt pins, the bind and
# common scripts, pwmake for the new passphrase, and the TPM2 tools the
# tpm2 pin runs (as coreos/ignition dracut/30ignition/module-setup.sh
# installs them).
flint_clevis_bind_tools="clevis-encrypt-sss clevis-encrypt-tang clevis-encrypt-tpm2
    clevis-luks-bind clevis-luks-common-functions clevis-luks-unlock pwmake
    tpm2_create tpm2_createpolicy"

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
# can show it (an agent unit), and the first-boot report
# (flint.report.url=, flint.report.journal=).
flint_failure_units="flint-failure.service flint-report-failure.service flint-report-emergency.service"

# Ignition's names for flint's units (coreos/ignition dracut/30ignition):
# each ignition-NAME is a symlink to flint-NAME in the unit directory,
# which systemd takes as an alias of that unit (systemd.unit(5),
# "Aliases"; since systemd 245 the aliases' drop-in directories are read
# too). A distro's glue ordered After=ignition-files.service, requiring
# ignition-complete.target, or with a drop-in in
# ignition-fetch.service.d/ then works unchanged. Symlinks, not Alias=:
# Alias= makes them only when a unit is enabled, which nothing does in an
# initramfs.
flint_ignition_aliases="fetch-offline.service fetch.service kargs.service
    disks.service mount.service files.service remount-sysroot.service
    complete.target diskful.target subsequent.target diskful-subsequent.target"

# called by dracut
check() {
    # Only when a distro module depends on it or it is named with -a/-m:
    # flint must never land in a host's initramfs by accident.
    return 255
}

# flint_network_module prints the dracut module that brings the network
# handler flint-neednet.service starts when a config needs the network.
# With systemd-networkd, that module itself: dracut's "network" module
# picks it too, but adds what only its other handlers and network roots
# use (40network/module-setup.sh) — a pre-udev hook (ifname= rules, which
# systemd-network-generator writes as .link files itself), a cmdline hook
# (root=dhcp) and the initqueue — so a dracut-pre-udev.service and a
# dracut-initqueue.service on every boot: 0.36 s in the boot's critical
# path and a second of shell beside the fetch-offline stage, in a TCG VM
# (tests/vm/bootbench.sh). With any other handler (NetworkManager,
# network-legacy, wicked, connman), or one already chosen, "network", which
# picks it as before.
flint_network_module() {
    local m
    for m in network-manager network-legacy network-wicked connman; do
        if dracut_module_included "$m"; then
            echo network
            return
        fi
    done
    if dracut_module_included systemd-networkd; then
        echo systemd-networkd
        return
    fi
    if [[ -e $dracutsysrootdir$systemdsystemunitdir/wicked.service ]] ||
        [[ -e $dracutsysrootdir$systemdsystemunitdir/connman.service ]] ||
        [[ -x $dracutsysrootdir/usr/libexec/nm-initrd-generator ]] ||
        [[ -x $dracutsysrootdir/usr/lib/nm-initrd-generator ]] ||
        [[ -x $dracutsysrootdir/usr/lib/NetworkManager/nm-initrd-generator ]] ||
        ! [[ -x $dracutsysrootdir$systemdutildir/systemd-networkd ]]; then
        echo network
        return
    fi
    echo systemd-networkd
}

# called by dracut
depends() {
    # qemu: the fw_cfg driver for the qemu platform; the network handler
    # (see flint_network_module).
    # Not dracut's mdraid and dm modules: their hooks (mdraid's in
    # pre-udev, pre-trigger, pre-mount and cleanup, dm's in pre-udev) run
    # on every boot, each hook directory non-empty starting one more
    # dracut-*.service and shell, and mdraid pulls in rootfs-block and
    # with it fs-lib, whose fsck puts a check of the root in the critical
    # path. By default they assemble nothing anyway (no rd.md.uuid): what
    # flint's RAID and LUKS need, the tools and the udev rules that name
    # the devices they create, install() puts in itself, so a config
    # without RAID or LUKS costs nothing (see install_raid_luks).
    local mods
    mods="systemd systemd-udevd systemd-journald qemu $(flint_network_module)"
    # As dracut's network module does: the NICs QEMU emulates, when the
    # image is built in a QEMU guest (hostonly images take their drivers
    # from the build host).
    if [[ $mods == *systemd-networkd ]] && is_qemu_virtualized; then
        mods+=" qemu-net"
    fi
    echo "$mods"
    return 0
}

# called by dracut
installkernel() {
    # The filesystems, RAID levels and dm-crypt a config can ask for, so the
    # disks and mount stages work whatever the host's initramfs policy;
    # LUKS2's default cipher is aes-xts-plain64 (xts is a module, and
    # cryptsetup reaches the kernel's ciphers through AF_ALG), and
    # aesni_intel: dm-crypt picks a volume's cipher when it opens it, so a
    # volume the disks stage opens without it stays on the generic AES
    # until the next reboot. Missing ones are skipped (instmods is
    # optional by default).
    hostonly='' instmods ext4 xfs btrfs vfat nls_cp437 nls_iso8859-1 nls_ascii nls_utf8 \
        md_mod raid0 raid1 raid10 raid456 crc32c_generic qemu_fw_cfg \
        dm_mod dm_crypt xts aesni_intel essiv af_alg algif_skcipher
    # The hypervisors' channels: hv_utils is Hyper-V's KVP, which the
    # hyperv platform reads the config from; vsock and its virtio
    # transport carry the applehv platform's config from the host (the
    # platform loads vsock when its device is missing). As Ignition's
    # module installs them; not host-only, the image boots anywhere.
    hostonly='' instmods hv_utils vsock vmw_vsock_virtio_transport_common vmw_vsock_virtio_transport
    return 0
}

# install_raid_luks installs what the disks stage's RAID (mdadm --create)
# and LUKS (cryptsetup) need beyond the tools, when the host has them:
# the udev rules that name what they create. They match only md and dm
# devices, so a boot without any runs none of them. Nothing is assembled
# or activated at boot: the disks stage creates and opens what the config
# asks for (dracut's mdraid module assembles nothing either without
# rd.md.uuid). dm_mod loads itself on first use of /dev/mapper/control
# (kmod-static-nodes.service makes the node; the module's devname alias
# loads it), md_mod and the RAID levels when mdadm creates an array.
install_raid_luks() {
    if find_binary mdadm > /dev/null; then
        inst_multiple mdadm
        # 01-md-raid-creating: udev leaves an array being created alone;
        # 63-md-raid-arrays: /dev/md/NAME and /dev/disk/by-id links.
        # Not 64-md-raid-assembly: incremental assembly of every member
        # udev sees is what dracut's module turns off too.
        inst_rules 01-md-raid-creating.rules 63-md-raid-arrays.rules
        # mdadm keeps its map of arrays in /run/mdadm.
        mkdir -p "$initdir/usr/lib/tmpfiles.d"
        echo "d /run/mdadm 0755 root root -" > "$initdir/usr/lib/tmpfiles.d/flint-mdadm.conf"
    fi
    if find_binary dmsetup > /dev/null; then
        inst_multiple dmsetup
        # cryptsetup waits for udev through 95-dm-notify's cookies; the
        # others make /dev/mapper/NAME and the by-uuid/by-label links of
        # a filesystem inside.
        inst_rules 10-dm.rules 13-dm-disk.rules 55-dm.rules 60-persistent-storage-dm.rules \
            95-dm-notify.rules
    fi
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
    # shellcheck disable=SC2086
    inst_multiple -o $flint_clevis_bind_tools
    install_raid_luks
    # No cracklib dictionary check of the passphrase clevis generates
    # (flint-luks.conf says why).
    inst_simple "$moddir/flint-luks.conf" /etc/security/pwquality.conf.d/flint-luks.conf || {
        dfatal "flint: could not install flint-luks.conf"
        exit 1
    }
    # cdrom_id: udev reads the medium in a CD-ROM drive only with it, and
    # without ID_CDROM_MEDIA makes no /dev/disk/by-label link for the
    # filesystem on it, so a config drive or cidata image attached as a
    # CD-ROM (OpenStack, CloudStack, Proxmox VE, KubeVirt, Azure's OVF
    # medium) would never be found.
    inst_rules 60-cdrom_id.rules

    inst_script "$moddir/flint-neednet.sh" /usr/libexec/flint-neednet
    inst_script "$moddir/flint-setup-user.sh" /usr/libexec/flint-setup-user
    inst_script "$moddir/flint-failure.sh" /usr/libexec/flint-failure
    inst_script "$moddir/flint-firstboot-done.sh" /usr/libexec/flint-firstboot-done
    inst_script "$moddir/flint-generator" "$systemdutildir/system-generators/flint-generator"

    for unit in $flint_stage_units $flint_agent_units \
        $flint_failure_units flint-remount-sysroot.service flint-console.service \
        flint-network-kargs.service \
        flint-firstboot-done.service flint-report.service \
        flint-complete.target flint-diskful.target \
        flint-subsequent.target flint-diskful-subsequent.target; do
        inst_simple "$moddir/$unit" "$systemdsystemunitdir/$unit" || {
            dfatal "flint: could not install $unit"
            exit 1
        }
    done

    for unit in $flint_ignition_aliases; do
        ln_r "$systemdsystemunitdir/flint-$unit" "$systemdsystemunitdir/ignition-$unit"
    done
    # Ignition's binary, for units and scripts that run it by name: flint
    # dispatches on the name it is run as (`ignition --stage=files ...`).
    ln_r /usr/bin/flint /usr/bin/ignition

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
    install_afterburn_names
}

# install_afterburn_names gives flint's initramfs agent units the names of
# Afterburn's (coreos/afterburn dracut/30afterburn), as unit aliases: a
# distro's glue ordered After= or Before= them orders against flint's.
install_afterburn_names() {
    local pair
    for pair in afterburn-hostname.service:flint-hostname.service \
        afterburn-network-kargs.service:flint-network-kargs.service \
        afterburn-ignition-fragment.service:flint-render-ignition.service; do
        ln_r "$systemdsystemunitdir/${pair#*:}" "$systemdsystemunitdir/${pair%%:*}"
    done
}
