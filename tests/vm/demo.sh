#!/bin/bash
# tests/vm/demo.sh: what `make demo` runs (after `make build`).
#
# It provisions a virtual machine with examples/demo.ign the way a real
# first boot does: installs what this machine lacks (Debian packages, as
# root), validates the examples, builds an initramfs with the dracut
# module and bin/flint (tests/vm/mkinitrd.sh, as the VM tests do), serves
# the demo's web page on 127.0.0.1:8765, boots Debian's kernel in QEMU with
# the config in fw_cfg and flint's log on the console, then reads the disk
# images back and reports what was provisioned. Everything it makes goes
# to bin/demo/ (the initramfs is reused while its inputs are unchanged).
set -euo pipefail

cd "$(dirname "$0")/../.."
out=bin/demo
port=8765
flint=bin/flint
mkdir -p "$out"
start=$(date +%s)

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
die() {
    echo "demo: $*" >&2
    exit 1
}

# find_kernel prints "PATH VERSION" of the newest kernel whose modules are
# installed.
find_kernel() {
    local k v found=""
    for k in /boot/vmlinuz-*; do
        v=${k#/boot/vmlinuz-}
        if [ -f "/lib/modules/$v/modules.dep" ]; then
            found="$k $v" # the glob is sorted: the last one is the newest
        fi
    done
    [ -n "$found" ] && echo "$found"
}

step "1/5 what this machine needs"
pkgs=""
for pair in qemu-system-x86_64:qemu-system-x86 dracut:dracut sgdisk:gdisk mkfs.ext4:e2fsprogs debugfs:e2fsprogs \
    mdadm:mdadm cryptsetup:cryptsetup dmsetup:dmsetup useradd:passwd; do
    command -v "${pair%%:*}" > /dev/null || pkgs+=" ${pair#*:}"
done
[ -d /usr/lib/dracut/modules.d/40network ] || pkgs+=" dracut-network"
if ! command -v busybox > /dev/null || ldd "$(command -v busybox)" > /dev/null 2>&1; then
    pkgs+=" busybox-static" # the root filesystem holds busybox alone
fi
find_kernel > /dev/null || pkgs+=" linux-image-amd64"
if [ -n "$pkgs" ]; then
    pkgs=$(echo "$pkgs" | tr ' ' '\n' | sort -u | tr '\n' ' ')
    if [ "$(id -u)" != 0 ]; then
        die "missing Debian packages:$pkgs; run make demo as root, or apt-get install them"
    fi
    echo "installing:$pkgs"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q > "$out/apt.log" 2>&1 || { cat "$out/apt.log"; die "apt-get update failed"; }
    # shellcheck disable=SC2086 # the list is meant to split into words
    apt-get install -y -q --no-install-recommends $pkgs >> "$out/apt.log" 2>&1 ||
        { tail -30 "$out/apt.log"; die "apt-get install failed (log: $out/apt.log)"; }
else
    echo "everything is there"
fi
[ "$(id -u)" = 0 ] || die "building the initramfs needs root (dracut): run make demo as root"
read -r kernel kver <<< "$(find_kernel)"
echo "kernel: $kernel"

step "2/5 flint validate examples/*.ign (every one must be valid)"
for f in examples/*.ign; do
    if "$flint" validate "$f"; then
        echo "valid: $f"
    else
        die "$f should be valid"
    fi
done
echo "and the broken ones in examples/invalid/, with the report an author gets:"
for f in examples/invalid/*.ign; do
    echo "\$ $flint validate $f"
    rc=0
    "$flint" validate "$f" > "$out/report.txt" || rc=$?
    sed 's/^/    /' "$out/report.txt"
    [ "$rc" = 1 ] || die "$f should be rejected with exit status 1, got $rc"
done

step "3/5 the initramfs: dracut with dracut/30flint and bin/flint"
stamp=$( (sha256sum "$flint" dracut/30flint/* tests/vm/mkinitrd.sh; echo "$kver") | sha256sum | cut -d' ' -f1)
if [ -f "$out/initrd.img" ] && [ "$(cat "$out/initrd.stamp" 2> /dev/null)" = "$stamp" ]; then
    echo "unchanged since the last demo: reusing $out/initrd.img"
else
    t0=$(date +%s)
    rm -f "$out/initrd.stamp"
    tests/vm/mkinitrd.sh "$flint" "$kver" "$out" "$out/initrd.img"
    echo "$stamp" > "$out/initrd.stamp"
    echo "built in $(($(date +%s) - t0)) s: $(du -m "$out/initrd.img" | cut -f1) MiB, of which /usr/bin/flint $(du -m "$flint" | cut -f1) MiB"
fi

step "4/5 boot: the qemu platform, examples/demo.ign in fw_cfg, a blank data disk"
tests/vm/mkroot.sh "$out" "$out/rootfs.img" > /dev/null
rm -f "$out/root.img" "$out/data.img"
truncate -s 64M "$out/root.img"
sgdisk -n 1:2048:+32M -t 1:8300 -c 1:root "$out/root.img" > /dev/null
dd if="$out/rootfs.img" of="$out/root.img" bs=1M seek=1 conv=notrunc,sparse status=none
truncate -s 256M "$out/data.img"

# The page the config fetches (and checks against its hash), served as the
# guest sees it: 10.0.2.2 is the host's 127.0.0.1 on QEMU's user network.
busybox httpd -f -vv -p "127.0.0.1:$port" -h examples/demo-www 2> "$out/httpd.log" &
httpd=$!
qemu=""
cleanup() {
    kill "$httpd" 2> /dev/null || true
    [ -z "$qemu" ] || kill "$qemu" 2> /dev/null || true
}
trap cleanup EXIT
sleep 0.2
kill -0 "$httpd" 2> /dev/null || die "cannot serve on 127.0.0.1:$port (in use?): $(cat "$out/httpd.log")"

echo "kernel arguments: ignition.firstboot ignition.platform.id=qemu flint.console=1"
echo "(flint's lines below come from the guest's console; the full console is in $out/console.log)"
echo
t0=$(date +%s)
timeout 300 qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 2 -nodefaults -nographic \
    -serial stdio -no-reboot -device virtio-rng-pci \
    -kernel "$kernel" -initrd "$out/initrd.img" \
    -append "console=ttyS0 panic=-1 root=LABEL=flintroot rd.shell=0 rd.emergency=poweroff ignition.firstboot ignition.platform.id=qemu flint.console=1" \
    -fw_cfg name=opt/com.coreos/config,file=examples/demo.ign \
    -drive "file=$out/root.img,format=raw,if=virtio" -drive "file=$out/data.img,format=raw,if=virtio" \
    -netdev user,id=n0 -device virtio-net-pci,netdev=n0 < /dev/null 2>&1 |
    sed -u -e 's/\r//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' | tee "$out/console.log" |
    grep --line-buffered -E ' flint\[|^flint|flint-neednet|FLINTVM-ROOT|Switching root|FAILED|emergency' |
    grep --line-buffered -v -i 'command line' |
    sed -u -e 's/^\[ *\([0-9.]*\)\] localhost flint\[[0-9]*\]: /[\1 s] /' -e 's/FLINTVM-ROOT: init reached/the provisioned root filesystem booted/' || true
boot=$(($(date +%s) - t0))
grep -q "FLINTVM-ROOT: init reached" "$out/console.log" ||
    die "the VM did not reach its root filesystem (see the lines above and $out/console.log)"

step "5/5 what was provisioned, read back from the disk images"
# part_start DISK N prints partition N's first sector.
part_start() { sgdisk -i "$2" "$1" | sed -n 's/^First sector: \([0-9]*\).*/\1/p'; }
dcat() { debugfs -R "cat $2" "$1" 2> /dev/null; }
root="$out/root.img?offset=$(($(part_start "$out/root.img" 1) * 512))"
data="$out/data.img?offset=$(($(part_start "$out/data.img" 1) * 512))"
echo "data disk:      $(sgdisk -p "$out/data.img" | awk '$1 == "1" {print "partition 1 \"" $7 "\", " $4 " " $5}'), ext4 label $(debugfs -R stats "$data" 2> /dev/null | sed -n 's/^Filesystem volume name: *//p')"
page_hash=$(dcat "$data" /index.html | sha512sum | cut -d' ' -f1)
if grep -q "sha512-$page_hash" examples/demo.ign; then verdict="matches the config's sha512"; else verdict="DOES NOT match the config's hash"; fi
echo "web page:       /srv/www/index.html, $(dcat "$data" /index.html | wc -c) bytes, $verdict; requests the server answered: $(grep -c 'url:/index.html' "$out/httpd.log" || true)"
echo "hostname:       $(dcat "$root" /etc/hostname)"
echo "user:           $(dcat "$root" /etc/passwd | grep '^core:'), groups: $(dcat "$root" /etc/group | grep -E '^[^:]*:[^:]*:[^:]*:.*core' | cut -d: -f1 | tr '\n' ' ')"
echo "ssh key:        /home/core/.ssh/authorized_keys.d/ignition: $(dcat "$root" /home/core/.ssh/authorized_keys.d/ignition | cut -c1-40)..."
echo "units:          $(debugfs -R 'ls /etc/systemd/system' "$root" 2> /dev/null | tr -s ' ' '\n' | grep -E '\.(service|mount)$' | tr '\n' ' ')"
echo "enabled:        $(dcat "$root" /etc/systemd/system-preset/20-ignition.preset | tr '\n' ';')"
files_end=$(sed -n 's/^\[ *\([0-9.]*\)\] localhost flint\[[0-9]*\]: files: stage finished.*/\1/p' "$out/console.log" | head -1)
echo
echo "the files stage ended ${files_end:-?} s after the kernel started; the boot took $boot s; the whole demo $(($(date +%s) - start)) s."
