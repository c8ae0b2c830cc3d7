#!/bin/sh
# flint-setup-user: before fetch-offline, puts the config a bare-metal
# install or a PXE boot delivered where flint reads the user config
# (/run/ignition/user.ign, the first of the system config directories):
#
#   1. /config.ign at the initramfs root: an initrd appended to a PXE boot,
#      made by `flint pxe ignition wrap` or `coreos-installer pxe ignition
#      wrap` (coreos-installer, src/live/embed.rs, INITRD_IGNITION_PATH);
#   2. otherwise, on a disk boot (root= on the command line, not a live
#      root: root=live:…, or root=tmpfs as flint's live image boots,
#      docs/live-image.md), ignition/config.ign on the filesystem labelled boot, where
#      `flint install` and coreos-installer write it (fedora-coreos-config's
#      coreos-ignition-setup-user does the same for Ignition).
#
# Nothing found is not an error: the platform's config is read as usual.
#
# On a disk boot it also copies the NetworkManager keyfiles `flint install
# --copy-network` left in coreos-firstboot-network/ on the filesystem
# labelled boot into the initramfs's NetworkManager configuration, in
# place of what nm-initrd-generator made from the kernel command line
# (fedora-coreos-config, 35coreos-network/coreos-copy-firstboot-network.sh
# does the same); the unit runs before nm-initrd.service reads them.
#
# The FLINT_SETUP_USER_* variables move its files for tests
# (tests/blackbox/install_setup_user_test.go).

set -eu

dest=${FLINT_SETUP_USER_DEST:-/run/ignition}
initrd_config=${FLINT_SETUP_USER_INITRD:-/config.ign}
boot=${FLINT_SETUP_USER_BOOT:-/dev/disk/by-label/boot}
cmdline=${FLINT_SETUP_USER_CMDLINE:-/proc/cmdline}
mnt=${FLINT_SETUP_USER_MNT:-/run/flint/boot}
nm_dir=${FLINT_SETUP_USER_NM:-/run/NetworkManager/system-connections}
# How long a disk boot waits for the boot filesystem's link (udev makes it).
timeout=${FLINT_SETUP_USER_TIMEOUT:-30}

# install_config FILE WHAT: FILE becomes user.ign, mode 0600 (it can hold
# secrets), written beside and renamed so a half copy is never read.
install_config() {
    mkdir -p "$dest"
    chmod 0700 "$dest"
    (umask 077 && cp "$1" "$dest/.user.ign.tmp")
    mv -f "$dest/.user.ign.tmp" "$dest/user.ign"
    echo "flint-setup-user: the user config is $2"
}

initrd_done=0
if [ -f "$initrd_config" ]; then
    install_config "$initrd_config" "$initrd_config from the initramfs"
    initrd_done=1
fi

disk_boot=0
platform=
config_url=0
set -f
# The command line is one line: read by the shell, not by cat (every
# process started costs a tenth of a second in an emulated VM).
line=
read -r line < "$cmdline" || true
for word in $line; do
    case $word in
        root=live:* | root=tmpfs) disk_boot=0 ;;
        root=*) disk_boot=1 ;;
        ignition.platform.id=*) platform=${word#*=} ;;
        ignition.config.url=*) config_url=1 ;;
    esac
done
set +f
if [ "$disk_boot" = 0 ]; then
    exit 0
fi

# Only an installed disk's first boot waits for the filesystem labelled
# boot to appear: platform metal (what flint install and coreos-installer
# leave in the boot entry) with no config URL on the command line, where
# that filesystem is the one place the config can be. Any other disk boot
# (a cloud or VM image, whose config comes from its platform, and which
# may have no such filesystem at all) looks once, at once: waiting for
# udev to settle cost 1.8 s of every such first boot in a TCG VM
# (tests/vm/bootbench.sh), and holding it for $timeout s far more.
if [ "$platform" != metal ] || [ "$config_url" = 1 ]; then
    if [ ! -b "$boot" ]; then
        echo "flint-setup-user: no filesystem labelled boot, and not an installed disk's first boot (platform ${platform:-unset}): not waiting for one"
        exit 0
    fi
fi

waited=0
while [ ! -b "$boot" ]; do
    if [ "$waited" -ge "$timeout" ]; then
        echo "flint-setup-user: no filesystem labelled boot after ${timeout}s; no config from it"
        exit 0
    fi
    sleep 1
    waited=$((waited + 1))
done

mkdir -p "$mnt"
mount -o ro "$boot" "$mnt"
status=0
if [ "$initrd_done" = 0 ] && [ -f "$mnt/ignition/config.ign" ]; then
    install_config "$mnt/ignition/config.ign" "ignition/config.ign on the filesystem labelled boot" || status=$?
fi
net=$mnt/coreos-firstboot-network
if [ "$status" = 0 ] && [ -d "$net" ] && [ -n "$(ls -A "$net")" ]; then
    # The keyfiles win over the command line's network arguments: the
    # installer's user chose them (and carried no ip= along with them).
    # They can hold Wi-Fi or 802.1X secrets: 0600, as NetworkManager
    # wants keyfiles anyway (nm-settings-keyfile(5)).
    mkdir -p "$nm_dir"
    rm -f "$nm_dir"/*
    (umask 077 && cp "$net"/* "$nm_dir"/) || status=$?
    chmod 0600 "$nm_dir"/* || status=$?
    echo "flint-setup-user: the first boot's network is coreos-firstboot-network/ on the filesystem labelled boot: $(ls "$net" | tr '\n' ' ')"
fi
umount "$mnt"
rmdir "$mnt" 2> /dev/null || true
exit "$status"
