#!/bin/sh
# Reads flintvm.check=luks:NAME:FILE from the kernel command line; see
# flintvm-check.service. Every result line starts with FLINTVM-CHECK.
set -uf
say() { echo "FLINTVM-CHECK: $*"; }

spec=""
# shellcheck disable=SC2013 # the command line is one line of words
for word in $(cat /proc/cmdline); do
    case $word in flintvm.check=*) spec=${word#flintvm.check=} ;; esac
done
name=$(echo "$spec" | sed -n 's/^luks:\([^:]*\):.*/\1/p')
file=$(echo "$spec" | sed -n 's/^luks:[^:]*:\(.*\)/\1/p')
if [ -z "$name" ] || [ -z "$file" ]; then
    say "bad flintvm.check=$spec"
    exit 1
fi

mdadm --assemble --scan 2>&1 | sed 's/^/FLINTVM-CHECK: mdadm: /'
udevadm settle
line=$(sed -n "s/^${name}[[:space:]]\{1,\}//p" /sysroot/etc/crypttab)
say "crypttab: $name $line"
# shellcheck disable=SC2086 # a crypttab line: fields split on blanks
set -- $line
device=$1 keyfile=$2
case $device in
    UUID=*) node=$(blkid -U "${device#UUID=}") ;;
    *) node=$device ;;
esac
say "device: $device is $node"
cryptsetup open --key-file "/sysroot$keyfile" "$node" flintvm-check || { say "cryptsetup open failed"; exit 1; }
mkdir -p /run/flintvm-check
mount -o ro /dev/mapper/flintvm-check /run/flintvm-check || { say "mount failed"; exit 1; }
say "content: $(cat "/run/flintvm-check$file")"
umount /run/flintvm-check
cryptsetup close flintvm-check
mdadm --stop --scan > /dev/null 2>&1
say "done"
