#!/bin/bash
# mkroot.sh WORKDIR OUTPUT
#
# Makes the root filesystem image the VM tests and the demo boot into: an
# ext4 filesystem labelled flintroot (the kernel gets root=LABEL=flintroot)
# holding a static busybox, the files shadow-utils needs to add users, and
# an os-release (systemd refuses to switch into a directory that is not an
# OS tree). Its /sbin/init prints a marker with the guest's uptime,
# remounts the root read-only (a later boot must find it clean) and powers
# off. mkfs.ext4 -d fills it without mounting anything.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 WORKDIR OUTPUT" >&2
    exit 2
fi
work=$1 out=$2
root=$work/rootfs
busybox=$(command -v busybox)

rm -rf "$root"
mkdir -p "$root"/{bin,sbin,etc/skel,etc/systemd,proc,sys,dev,run,tmp,home,root,var/lib}
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cat > "$root/sbin/init" << 'END'
#!/bin/busybox sh
export PATH=/bin
busybox mount -t proc proc /proc
echo "FLINTVM-ROOT: init reached, uptime $(busybox cut -d' ' -f1 /proc/uptime)" > /dev/console
busybox mount -o remount,ro /
busybox sync
busybox poweroff -f
END
chmod 0755 "$root/sbin/init"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\nwheel:x:10:\n' > "$root/etc/group"
printf 'root:*:19000:0:99999:7:::\n' > "$root/etc/shadow"
printf 'root:*::\nwheel:*::\n' > "$root/etc/gshadow"
chmod 0600 "$root/etc/shadow" "$root/etc/gshadow"
printf 'NAME=flintvm\nID=flintvm\n' > "$root/etc/os-release"
printf 'UID_MIN 1000\nGID_MIN 1000\n' > "$root/etc/login.defs"

rm -f "$out"
truncate -s 32M "$out"
mkfs.ext4 -q -F -L flintroot -d "$root" "$out"
