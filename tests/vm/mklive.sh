#!/bin/bash
# mklive.sh FLINT KVER KERNEL WORKDIR OUTPUT [KARG...]
#
# Builds flint's own live ISO (docs/live-image.md), BIOS-bootable from
# El Torito and, hybrid, from a disk, out of Debian's parts:
#
#   images/pxeboot/vmlinuz     KERNEL (Debian's linux-image-amd64)
#   images/pxeboot/initrd.img  a dracut initramfs with dracut/30flint and
#                              dracut/35flint-live (mkinitrd.sh)
#   images/pxeboot/rootfs.img  the live root, a newc cpio of live-root/:
#                              a static busybox, flint, and an init that
#                              brings up DHCP and runs the live installer
#                              (flint install --generator, --from-cmdline)
#   images/ignition.img        the Ignition embed area: 256 KiB of zeros
#   coreos/igninfo.json        names images/ignition.img
#   coreos/kargs.json          the kernel-argument area in boot/grub/grub.cfg
#   coreos/features.json       what the live system supports
#   boot/grub/grub.cfg         GRUB loads the kernel with the area's
#                              arguments and the three initrds
#
# GRUB's El Torito image and hybrid MBR come from grub-pc-bin, the ISO from
# xorriso. The default kernel arguments are root=tmpfs
# ignition.firstboot ignition.platform.id=metal and the KARGs.
set -euo pipefail

if [ $# -lt 5 ]; then
    echo "usage: $0 FLINT KVER KERNEL WORKDIR OUTPUT [KARG...]" >&2
    exit 2
fi
flint=$(realpath "$1") kver=$2 kernel=$(realpath "$3") work=$(realpath -m "$4") out=$(realpath -m "$5")
shift 5
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
busybox=$(command -v busybox)
# The karg area's size: room for customisation after the defaults.
kargs_size=1024
embed_size=$((256 * 1024))

mkdir -p "$work"
tree=$work/iso
rm -rf "$tree" "$work/live-root"
mkdir -p "$tree/images/pxeboot" "$tree/coreos" "$tree/boot/grub"

# mkinitrd.sh's image is not compressed; on the ISO it is, as distros ship
# it (the kernel has CONFIG_RD_ZSTD): GRUB reads a third of the bytes
# through the BIOS.
"$here/mkinitrd.sh" "$flint" "$kver" "$work" "$work/initrd.img" "$repo/dracut/35flint-live"
zstd -q -3 -T0 -f -o "$tree/images/pxeboot/initrd.img" "$work/initrd.img"
cp "$kernel" "$tree/images/pxeboot/vmlinuz"

# The live root. Its init has no systemd: it mounts the API filesystems,
# leases an address on every NIC (busybox udhcpc; the initramfs's
# systemd-networkd stopped at switch-root), and asks flint's live
# installer whether this boot installs (the generator's decision, written
# where flint-installer-generator writes it), then installs and reboots
# as flint-installer.service and flint-installer-reboot.service do.
root=$work/live-root/live-root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/libexec,etc/skel,etc/systemd,proc,sys,dev,run,tmp,home,root,var/lib}
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$flint" "$root/usr/bin/flint"
cat > "$root/sbin/init" << 'END'
#!/bin/busybox sh
export PATH=/usr/bin:/bin
bb=/bin/busybox
# systemd's switch-root moved /proc, /sys, /dev and /run here; another
# initramfs may not have.
[ -e /proc/self ] || $bb mount -t proc proc /proc
mounted() { $bb grep -q "^[^ ]* $1 " /proc/mounts; }
mounted /sys || $bb mount -t sysfs sysfs /sys
mounted /dev || $bb mount -t devtmpfs devtmpfs /dev
mounted /run || $bb mount -t tmpfs -o mode=0755 tmpfs /run
exec > /dev/console 2>&1
echo "flint-live: the live root is up, uptime $($bb cut -d' ' -f1 /proc/uptime)"
for nic in /sys/class/net/*; do
    nic=${nic##*/}
    [ "$nic" = lo ] && continue
    $bb ip link set "$nic" up
    $bb udhcpc -q -n -t 20 -T 1 -i "$nic" -s /usr/libexec/flint-live-dhcp > /dev/null 2>&1 &&
        echo "flint-live: $nic has an address"
done
$bb ip link set lo up
[ -f /etc/motd ] && echo "flint-live: /etc/motd: $($bb cat /etc/motd)"
$bb mkdir -p /run/flint-live-units
flint install --generator /run/flint-live-units
if [ ! -L /run/flint-live-units/default.target ]; then
    echo "flint-live: nothing to install; powering off"
    $bb sync
    $bb poweroff -f
fi
echo "flint-live: installing, uptime $($bb cut -d' ' -f1 /proc/uptime)"
if flint install --from-cmdline; then
    echo "flint-live: install complete, uptime $($bb cut -d' ' -f1 /proc/uptime)"
    $bb sync
    if [ -e /run/flint-installer-reboot ]; then
        echo "flint-live: rebooting into the installed disk"
        $bb reboot -f
    fi
    echo "flint-live: coreos.inst.skip_reboot: a shell (exit to reboot)"
    $bb sh
    $bb reboot -f
fi
echo "flint-live: the install failed; powering off"
$bb poweroff -f
END
cat > "$root/usr/libexec/flint-live-dhcp" << 'END'
#!/bin/busybox sh
# udhcpc's event script (busybox udhcpc -s): the lease's address, route and
# DNS servers.
bb=/bin/busybox
case $1 in
    bound | renew)
        $bb ip addr flush dev "$interface"
        $bb ip addr add "$ip/${mask:-24}" dev "$interface"
        for r in $router; do
            $bb ip route add default via "$r" dev "$interface"
            break
        done
        : > /etc/resolv.conf
        for d in $dns; do
            echo "nameserver $d" >> /etc/resolv.conf
        done
        ;;
esac
END
chmod 0755 "$root/sbin/init" "$root/usr/libexec/flint-live-dhcp"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\nwheel:x:10:\n' > "$root/etc/group"
printf 'root:*:19000:0:99999:7:::\n' > "$root/etc/shadow"
printf 'root:*::\nwheel:*::\n' > "$root/etc/gshadow"
chmod 0600 "$root/etc/shadow" "$root/etc/gshadow"
printf 'NAME=flint-live\nID=flint-live\n' > "$root/etc/os-release"
printf 'UID_MIN 1000\nGID_MIN 1000\n' > "$root/etc/login.defs"
(cd "$work/live-root" && find live-root | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) \
    | zstd -q -3 -T0 > "$tree/images/pxeboot/rootfs.img"

head -c "$embed_size" /dev/zero > "$tree/images/ignition.img"
printf '{"file": "images/ignition.img"}\n' > "$tree/coreos/igninfo.json"
# The initramfs has the same file (etc/coreos/features.json), for pxe customize.
cp "$repo/dracut/35flint-live/features.json" "$tree/coreos/features.json"

kargs="root=tmpfs ignition.firstboot ignition.platform.id=metal${*:+ $*}"
if [ ${#kargs} -ge $kargs_size ]; then
    echo "mklive.sh: the default kernel arguments do not fit the $kargs_size-byte area" >&2
    exit 1
fi
area=$kargs$'\n'
while [ ${#area} -lt $kargs_size ]; do
    area+="#"
done
linux_prefix=$'\tlinux /images/pxeboot/vmlinuz '
head=$'serial --unit=0 --speed=115200\nterminal_input serial console\nterminal_output serial console\nset timeout=0\nmenuentry "flint live" {\n'
printf '%s%s%s\n\tinitrd /images/pxeboot/initrd.img /images/pxeboot/rootfs.img /images/ignition.img\n}\n' \
    "$head" "$linux_prefix" "$area" > "$tree/boot/grub/grub.cfg"
offset=$((${#head} + ${#linux_prefix}))
printf '{"default": "%s", "size": %d, "files": [{"path": "boot/grub/grub.cfg", "offset": %d, "pad": "#", "end": "\\n"}]}\n' \
    "$kargs" "$kargs_size" "$offset" > "$tree/coreos/kargs.json"

# GRUB's El Torito image (a core that reads the CD through the BIOS and
# finds its modules and grub.cfg in /boot/grub), and boot_hybrid.img as
# the MBR so the same file boots from a disk, as grub-mkrescue makes them;
# xorriso is called directly so the primary volume keeps ISO 9660 level-1
# names (IGNINFO.JSO), which flint and coreos-installer look files up by.
grubdir=/usr/lib/grub/i386-pc
mkdir -p "$tree/boot/grub/i386-pc"
cp "$grubdir"/*.mod "$grubdir"/*.lst "$tree/boot/grub/i386-pc/"
grub-mkimage -O i386-pc-eltorito -d "$grubdir" -p /boot/grub -o "$tree/boot/grub/i386-pc/eltorito.img" \
    biosdisk iso9660 normal linux serial terminal echo
rm -f "$out"
if ! xorriso -as mkisofs -R -J -V FLINT-LIVE -o "$out" \
    -b boot/grub/i386-pc/eltorito.img -no-emul-boot -boot-load-size 4 --grub2-boot-info \
    --grub2-mbr "$grubdir/boot_hybrid.img" "$tree" > "$work/xorriso.log" 2>&1; then
    cat "$work/xorriso.log" >&2
    echo "mklive.sh: xorriso failed (log above)" >&2
    exit 1
fi

# The El Torito boot information table GRUB's cdboot reads to find the
# rest of its core (bytes 8-63 of the boot image: the primary volume
# descriptor's block, the image's block and length, and the 32-bit sum of
# the image's words from byte 64), as xorriso's -boot-info-table writes it.
# It is written here because that option also makes xorriso 1.5 keep
# lower-case ISO 9660 names (coreos/igninfo.jso), which readers that look
# up COREOS/IGNINFO.JSO do not find.
read -r lba size < <(xorriso -indev "$out" -find /boot/grub/i386-pc/eltorito.img -exec report_lba -- 2>/dev/null |
    sed -n "s/^File data lba: *0 *, *\([0-9]*\) *, *[0-9]* *, *\([0-9]*\) *,.*/\1 \2/p")
if [ -z "${lba:-}" ]; then
    echo "mklive.sh: cannot find the El Torito image's block in $out" >&2
    exit 1
fi
sum=$(od -A n -v -t u4 -j 64 "$tree/boot/grub/i386-pc/eltorito.img" |
    awk '{ for (i = 1; i <= NF; i++) s = (s + $i) % 4294967296 } END { printf "%d", s }')
# le32 N prints N as 4 little-endian bytes.
le32() {
    local n=$1 i
    for i in 0 1 2 3; do
        printf "\\$(printf %03o $(((n >> (8 * i)) & 255)))"
    done
}
{ le32 16; le32 "$lba"; le32 "$size"; le32 "$sum"; head -c 40 /dev/zero; } |
    dd of="$out" bs=1 seek=$((lba * 2048 + 8)) conv=notrunc status=none
