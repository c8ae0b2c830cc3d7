#!/bin/bash
# mkosimage.sh WORKDIR KERNEL INITRD ROOTIMG GRUB_SNIPPET OUTPUT
#
# Makes the OS image the bare-metal install scenario installs: a 160 MiB
# GPT disk that boots through GRUB on a BIOS (SeaBIOS), as a distro's
# image would, built from Debian's grub-pc-bin without loop devices,
# mounts or grub-install:
#
#   1  bios  1 MiB   BIOS boot partition: GRUB's core.img
#   2  boot  64 MiB  ext4 labelled boot: the kernel, the initramfs
#                    (zstd), GRUB's modules and grub.cfg, the first-boot
#                    snippet (GRUB_SNIPPET, dracut/grub2/05_ignition.cfg),
#                    a BLS entry and the empty stamp ignition.firstboot
#   3  root  32 MiB  ROOTIMG (mkroot.sh's busybox root, labelled flintroot)
#
# and free space after them for the partition the config adds.
#
# Debian's GRUB has no blscfg command (a Fedora patch), so grub.cfg names
# the kernel and its arguments itself, ${ignition_firstboot} among them;
# the BLS entry is there for flint install's edits.
#
# The boot sector and core.img are put in place by hand, as grub-bios-setup
# would: boot.img's code (its first 440 bytes: the protective MBR's
# partition table stays) with the core's first sector number at offset
# 0x5c, and the core's first sector (diskboot) told where the rest starts
# at offset 500 (GRUB, grub-core/boot/i386/pc/boot.S and diskboot.S).
set -euo pipefail

if [ $# -ne 6 ]; then
    echo "usage: $0 WORKDIR KERNEL INITRD ROOTIMG GRUB_SNIPPET OUTPUT" >&2
    exit 2
fi
work=$1 kernel=$2 initrd=$3 rootimg=$4 snippet=$5 out=$6
grubdir=/usr/lib/grub/i386-pc
core_sector=2048

tree=$work/bootfs
rm -rf "$tree"
mkdir -p "$tree/grub/i386-pc" "$tree/loader/entries"
cp "$kernel" "$tree/vmlinuz"
# The test initramfs is built uncompressed; on the boot filesystem it is
# compressed, as distros ship it (the kernel has CONFIG_RD_ZSTD).
zstd -q -3 -T0 -f -o "$tree/initrd.img" "$initrd"
cp "$grubdir"/*.mod "$grubdir"/*.lst "$tree/grub/i386-pc/"
cp "$snippet" "$tree/grub/05_ignition.cfg"
args="console=ttyS0 panic=-1 root=LABEL=flintroot rd.shell=0 rd.emergency=poweroff ignition.platform.id=metal flintvm.journal flint.console=1"
cat > "$tree/grub/grub.cfg" << END
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
set timeout=0
source /grub/05_ignition.cfg
# Short: GRUB wraps its console lines at 80 columns.
echo "FLINTOS-GRUB: [\${ignition_firstboot}]"
linux /vmlinuz $args \${ignition_firstboot}
initrd /initrd.img
boot
echo "FLINTOS-GRUB: boot failed"
END
cat > "$tree/loader/entries/flintos-6.1.conf" << END
title flintos
version 6.1
linux /vmlinuz
initrd /initrd.img
options $args \$ignition_firstboot
END
: > "$tree/ignition.firstboot"

rm -f "$out"
truncate -s 160M "$out"
sgdisk -n "1:$core_sector:+1M" -t 1:EF02 -c 1:bios \
    -n 2:0:+64M -t 2:8300 -c 2:boot \
    -n 3:0:+32M -t 3:8300 -c 3:root "$out" > /dev/null
boot_start=$(sgdisk -i 2 "$out" | sed -n 's/^First sector: \([0-9]*\).*/\1/p')
root_start=$(sgdisk -i 3 "$out" | sed -n 's/^First sector: \([0-9]*\).*/\1/p')

# GRUB 2.06 refuses ext4's metadata_csum_seed and orphan_file features.
truncate -s 64M "$work/bootfs.img"
mkfs.ext4 -q -F -L boot -O ^metadata_csum_seed,^orphan_file -d "$tree" "$work/bootfs.img"
dd if="$work/bootfs.img" of="$out" bs=512 seek="$boot_start" conv=notrunc,sparse status=none
dd if="$rootimg" of="$out" bs=512 seek="$root_start" conv=notrunc,sparse status=none

grub-mkimage -O i386-pc -d "$grubdir" -p '(hd0,gpt2)/grub' -o "$work/core.img" biosdisk part_gpt ext2
if [ "$(stat -c %s "$work/core.img")" -gt $((1024 * 1024)) ]; then
    echo "mkosimage.sh: core.img does not fit the BIOS boot partition" >&2
    exit 1
fi
dd if="$work/core.img" of="$out" bs=512 seek="$core_sector" conv=notrunc status=none
dd if="$grubdir/boot.img" of="$out" bs=440 count=1 conv=notrunc status=none
# le64 N prints N as 8 little-endian bytes.
le64() {
    local n=$1 i
    for i in 0 1 2 3 4 5 6 7; do
        printf "\\$(printf %03o $(((n >> (8 * i)) & 255)))"
    done
}
le64 "$core_sector" | dd of="$out" bs=1 seek=$((0x5c)) conv=notrunc status=none
le64 $((core_sector + 1)) | dd of="$out" bs=1 seek=$((core_sector * 512 + 500)) conv=notrunc status=none
