#!/bin/sh
# flint-firstboot-done: once every stage of the first boot succeeded,
# removes from the filesystem labelled boot what `flint install` left for
# that boot alone: ignition/config.ign (it can hold secrets, and the
# machine is provisioned) and the first-boot stamp ignition.firstboot, so
# GRUB no longer adds ignition.firstboot and the next boot runs nothing;
# and flint.firstboot-stamp, flint's "first boot in progress" stamp
# (docs/operator-notes.md), should the files stage have left it (its
# success removes it).
# Ignition leaves the stamp to ignition-firstboot-complete.service in the
# real root; flint's counterpart there (dracut/systemd/
# flint-firstboot-complete.service) removes it when this could not.
#
# Only on a disk boot (root= on the command line, not a live root), and
# only when the filesystem is there: flint-setup-user already waited for
# it. The FLINT_FIRSTBOOT_DONE_* variables move its files for tests
# (tests/blackbox/install_setup_user_test.go).

set -eu

boot=${FLINT_FIRSTBOOT_DONE_BOOT:-/dev/disk/by-label/boot}
cmdline=${FLINT_FIRSTBOOT_DONE_CMDLINE:-/proc/cmdline}
mnt=${FLINT_FIRSTBOOT_DONE_MNT:-/run/flint/boot-done}

disk_boot=0
set -f
# shellcheck disable=SC2013 # the command line is one line of words
for word in $(cat "$cmdline"); do
    case $word in
        root=live:*) disk_boot=0 ;;
        root=*) disk_boot=1 ;;
    esac
done
set +f
if [ "$disk_boot" = 0 ] || [ ! -b "$boot" ]; then
    exit 0
fi

mkdir -p "$mnt"
mount -o rw "$boot" "$mnt"
status=0
for f in ignition/config.ign flint.firstboot-stamp ignition.firstboot; do
    if [ -e "$mnt/$f" ]; then
        if rm -f "$mnt/$f"; then
            echo "flint-firstboot-done: removed $f from the filesystem labelled boot"
        else
            status=1
        fi
    fi
done
umount "$mnt"
rmdir "$mnt" 2> /dev/null || true
exit "$status"
