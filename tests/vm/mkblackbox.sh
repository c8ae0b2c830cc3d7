#!/bin/bash
# mkblackbox.sh FLINT BLACKBOX_TEST EXAMPLES KVER WORKDIR OUTPUT
#
# Builds the initramfs that runs the blackbox tier's RAID and LUKS cases
# inside a VM (blackbox_in_vm_test.go): dracut's base module only (no
# systemd, no udev running, like the CI host), the tools the cases and
# flint call with their libraries, the kernel modules for loop devices,
# md, device-mapper with dm-crypt and the filesystems the cases make, the
# static test binary BLACKBOX_TEST and the flint binary FLINT under
# /flintbb with the example kickstarts (the directory EXAMPLES) in
# /flintbb/examples/kickstart, and our own /init in place of dracut's. The
# shadow tools (useradd, usermod, groupadd, groupmod, with /etc/login.defs)
# are there for the files stage of the kickstart server example. The init
# mounts the API filesystems and a tmpfs /tmp for the disk images, runs
# the cases and the server example,
# prints FLINTBB-RESULT: PASS or FLINTBB-RESULT: FAIL on the console, and
# powers the machine off.
#
# clevis, tang and a TPM are left out: the cases that need them skip,
# saying so. Nothing is written under /usr; the host's dracut.conf.d stays
# out. It fails when dracut logs an error (a failed inst_multiple leaves
# dracut's exit status 0 and a partial image).
set -euo pipefail

if [ $# -ne 6 ]; then
    echo "usage: $0 FLINT BLACKBOX_TEST EXAMPLES KVER WORKDIR OUTPUT" >&2
    exit 2
fi
flint=$(realpath "$1") bbtest=$(realpath "$2") examples=$(realpath "$3") kver=$4 work=$(realpath -m "$5") out=$(realpath -m "$6")
if [ ! -f "$examples/server.ks" ]; then
    echo "mkblackbox.sh: $examples holds no server.ks: not the example kickstarts' directory" >&2
    exit 1
fi

stage=$work/bb-stage
rm -rf "$stage" "$work/bb-confdir" "$work/bb-tmp"
mkdir -p "$stage/flintbb/examples/kickstart" "$work/bb-confdir" "$work/bb-tmp"
cp "$flint" "$stage/flintbb/flint"
cp "$bbtest" "$stage/flintbb/blackbox.test"
cp "$examples"/*.ks "$stage/flintbb/examples/kickstart/"

cat > "$stage/init" <<'INIT'
#!/bin/bash
# The blackbox RAID and LUKS cases, then power-off (mkblackbox.sh).
echo "FLINTBB: init started"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TMPDIR=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o size=1g tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /root /dev/disk/by-id
# The kernel's WRITE_ZEROES complaints about loop devices would drown the
# test output.
echo 1 > /proc/sys/kernel/printk
for m in loop md_mod raid1 dm_mod dm_crypt xts aesni_intel ext4 xfs vfat btrfs algif_skcipher; do
    modprobe "$m" || echo "FLINTBB: modprobe $m failed"
done
# The kickstart server example's RAID1 members are sparse images of 4 and
# 1 GiB in the 1 GiB tmpfs /tmp: a resync at full speed would write every
# block of each member into memory and fill /tmp (and the 2 GiB guest).
# At most 1000 KiB/s (and no minimum forcing more) keeps what it writes
# to a few dozen MiB while the example runs; nothing checks the resync.
echo 1000 > /proc/sys/dev/raid/speed_limit_max || echo "FLINTBB: cannot cap the RAID resync speed"
echo 1 > /proc/sys/dev/raid/speed_limit_min || echo "FLINTBB: cannot cap the RAID resync speed"
echo "FLINTBB: md $(test -e /proc/mdstat && echo yes || echo no), device-mapper $(test -e /sys/class/misc/device-mapper && echo yes || echo no)"
cd /flintbb
run=$(sed -n 's/.*flintbb.run=\([^ ]*\).*/\1/p' /proc/cmdline)
FLINT_BLACKBOX_FLINT=/flintbb/flint FLINT_BLACKBOX_ONLY_NEEDS=1 FLINT_BLACKBOX_EXAMPLES=/flintbb/examples/kickstart \
    ./blackbox.test -test.v -test.count=1 -test.timeout=30m -test.run "${run:-^(TestDisks|TestKickstartExamples)\$}"
rc=$?
if [ "$rc" = 0 ]; then
    echo "FLINTBB-RESULT: PASS"
else
    echo "FLINTBB-RESULT: FAIL (exit status $rc)"
fi
sync
echo o > /proc/sysrq-trigger
sleep 30
INIT
chmod 755 "$stage/init"

tools="losetup partx sgdisk sfdisk blkid mount umount truncate wipefs mkfs.ext4 mke2fs mkfs.xfs mkfs.btrfs \
    mkfs.vfat mkfs.fat mkswap mdadm cryptsetup modprobe sed sync useradd usermod groupadd groupmod /etc/login.defs"
drivers="loop md_mod raid1 dm_mod dm_crypt xts aesni_intel ext4 xfs vfat btrfs algif_skcipher"

log=$work/bb-dracut.log
if ! dracut --force --conf /dev/null --confdir "$work/bb-confdir" \
    --no-hostonly --no-hostonly-cmdline --kver "$kver" --tmpdir "$work/bb-tmp" \
    -m "base" --install "$tools" --add-drivers "$drivers" \
    --include "$stage" / --no-compress "$out" > "$log" 2>&1; then
    cat "$log" >&2
    echo "mkblackbox.sh: dracut failed (log above)" >&2
    exit 1
fi
if grep -E 'ERROR|FAILED' "$log" >&2; then
    echo "mkblackbox.sh: dracut logged errors (above; full log in $log): the image is incomplete" >&2
    exit 1
fi
