#!/bin/bash
# bootbench.sh [-n N] [-o DIR] [-a ARGS] [-A NAME=ARGS] [-s] [NAME=INITRD ...]
#
# An on-demand benchmark of the first boot (not run by `make test`): boots
# the demo (examples/demo.ign in fw_cfg, its web page served on
# 127.0.0.1:8765, a blank data disk, the busybox root of mkroot.sh) N
# times with each initramfs and prints, per initramfs, the median of
# every unit's time from the console's stamps: dracut's hook services,
# each flint unit, the fsck of the root, /sysroot's mount, and kernel
# start to the end of the files stage and to switch-root.
#
# Without NAME=INITRD it builds one from this tree (go build, then
# mkinitrd.sh) and names it "tree"; NAME=- does the same under NAME. To compare two trees, build an
# initramfs from each with mkinitrd.sh and give both: the boots alternate
# between them (round 1: A, B; round 2: B, A; ...) so that a machine whose
# load changes affects both alike. Compare the medians and their ratios,
# not absolute times: a TCG guest runs several times slower on a loaded
# host.
#
# The stamps are the kernel's (printk.time, seconds since the kernel
# started): PID 1 logs "Starting U..." and "Finished U." to the kernel log
# (systemd.log_target=kmsg, printk.devkmsg=on so that the kernel does not
# rate-limit it), which reaches the serial console. A unit's time is its
# first "Starting" to its "Finished" (or "Started", "Mounted"); a unit
# skipped by a condition has no time and shows as "-".
#
# -a adds kernel arguments: flint.console=1 puts flint's own lines, with
# the journal's stamps, in the consoles kept, to tell a stage's own time
# from its unit's. -A NAME=ARGS adds kernel arguments to the boots of
# NAME's initramfs only (repeatable): an initramfs of Ignition's dracut
# module has no generator that brings the network up on its own, so its
# boots want "rd.neednet=1 ip=dhcp", as a distro's glue would give them.
#
# The second initramfs may be Ignition's (built by hand from its public
# source, see tests/vm/README.md): its units (ignition-*.service) are read
# beside flint's, and the rows "stage:disks" (and fetch-offline, fetch,
# kargs, mount, files) hold either's unit of that stage. With two
# initramfs the table shows each median with its spread (min-max) and the
# second's median over the first's.
#
# -s boots a real root with systemd instead of the busybox root: the
# host's own installed systemd, udev, dbus, util-linux's mount, e2fsck and
# kmod with the shared libraries they load (systemd_root below), whose
# one unit of its own, ordered after multi-user.target, prints the marker
# and powers off. The table then has the row "total:multi-user" (kernel
# start to the real root's multi-user.target) beside the switch-root.
#
# Needs root (dracut, when it builds) and what `make demo` needs. Every
# console is kept in DIR (default bin/bootbench).
set -euo pipefail

cd "$(dirname "$0")/../.."
n=3 out=bin/bootbench port=8765 extra="" sysd=""
declare -A own=()
while getopts n:o:a:A:s opt; do
    case $opt in
        n) n=$OPTARG ;;
        o) out=$OPTARG ;;
        a) extra=$OPTARG ;;
        s) sysd=1 ;;
        A)
            [[ $OPTARG == *=* ]] || { echo "bootbench: -A $OPTARG: want NAME=ARGS" >&2; exit 2; }
            own[${OPTARG%%=*}]=${OPTARG#*=}
            ;;
        *)
            echo "usage: $0 [-n N] [-o DIR] [-a ARGS] [-A NAME=ARGS] [-s] [NAME=INITRD ...]" >&2
            exit 2
            ;;
    esac
done
shift $((OPTIND - 1))
mkdir -p "$out"
out=$(realpath "$out")

die() {
    echo "bootbench: $*" >&2
    exit 1
}

kernel="" kver=""
for k in /boot/vmlinuz-*; do
    v=${k#/boot/vmlinuz-}
    [ -f "/lib/modules/$v/modules.dep" ] && kernel=$k kver=$v
done
[ -n "$kernel" ] || die "no kernel in /boot with its modules in /lib/modules"

# tree builds flint and the initramfs of this tree, once.
tree() {
    if [ ! -f "$out/tree.img.done" ]; then
        echo "building flint and the initramfs of this tree in $out" >&2
        CGO_ENABLED=0 go build -tags nethttpomithttp2 -trimpath -ldflags "-s -w -X main.version=bootbench" \
            -o "$out/flint" ./cmd/flint >&2
        tests/vm/mkinitrd.sh "$out/flint" "$kver" "$out/build" "$out/tree.img" >&2
        touch "$out/tree.img.done"
    fi
    echo "$out/tree.img"
}
rm -f "$out/tree.img.done"

names=() imgs=()
[ $# -gt 0 ] || set -- tree=-
for arg in "$@"; do
    [[ $arg == *=* ]] || die "$arg: want NAME=INITRD"
    img=${arg#*=}
    # NAME=- is this tree's, built here.
    [ "$img" != - ] || img=$(tree)
    [ -f "$img" ] || die "$img: no such initramfs"
    names+=("${arg%%=*}")
    imgs+=("$(realpath "$img")")
done

# systemd_root WORK OUTPUT makes the root filesystem of -s: mkroot.sh's
# tree (busybox, the files useradd needs, os-release) as a merged-/usr
# tree whose init is the host's own systemd, with its units, generators
# and udev rules, dbus (logind needs it), util-linux's mount (mount
# units), e2fsck and kmod, every shared library they link (ldd) and the
# NSS module DynamicUser= needs. The default target is multi-user.target;
# flintvm-root.service, wanted by it and ordered after it, prints the
# marker the boot waits for and powers off. Kernel modules stay out: the
# initramfs loaded the VM's drivers before the switch. Prints the image's
# size in MiB.
systemd_root() {
    local work=$1 img=$2 r=$1/rootfs f lib mb
    tests/vm/mkroot.sh "$work" "$img" > /dev/null
    mkdir -p "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib" "$r/usr/lib64" "$r/usr/libexec" "$r/var/log" "$r/etc/systemd/system/multi-user.target.wants"
    mv "$r"/bin/* "$r/usr/bin/"
    mv "$r"/sbin/* "$r/usr/sbin/"
    rmdir "$r/bin" "$r/sbin"
    for f in bin sbin lib lib64; do ln -s "usr/$f" "$r/$f"; done
    ln -sf ../lib/systemd/systemd "$r/usr/sbin/init"
    for f in /usr/lib/systemd /usr/lib/udev /usr/lib/tmpfiles.d /usr/lib/sysusers.d /usr/lib/sysctl.d \
        /usr/lib/x86_64-linux-gnu/systemd /usr/lib/x86_64-linux-gnu/libnss_systemd.so.2 /usr/lib/x86_64-linux-gnu/libgcc_s.so.1 \
        /usr/share/dbus-1 /usr/bin/dbus-daemon /usr/bin/systemctl /usr/bin/journalctl /usr/bin/udevadm /usr/bin/systemd-tmpfiles \
        /usr/bin/systemd-sysusers /usr/bin/systemd-machine-id-setup /usr/bin/systemd-firstboot /usr/bin/systemd-escape \
        /usr/bin/systemd-notify /usr/bin/systemd-ask-password /usr/bin/systemd-tty-ask-password-agent /usr/bin/mount \
        /usr/bin/umount /usr/sbin/e2fsck /usr/sbin/fsck /usr/sbin/fsck.ext4 /usr/bin/kmod /usr/sbin/modprobe /usr/sbin/agetty; do
        [ -e "$f" ] || die "-s: $f: not on this host (the systemd root is built from the host's own systemd)"
        mkdir -p "$r${f%/*}" && cp -a "$f" "$r$f"
    done
    # Only the units of the packages copied (dpkg's lists): the first
    # boot's preset-all would enable and start every other service the
    # host has a unit of.
    command -v dpkg-query > /dev/null || die "-s: the systemd root is built from a Debian host's packages (no dpkg-query)"
    dpkg-query -L systemd udev dbus dbus-daemon dbus-system-bus-common 2> /dev/null |
        sed -n 's|^/\(usr/\)\{0,1\}lib/systemd/system/||p' | sort -u > "$work/units.keep"
    (cd "$r/usr/lib/systemd/system" && find . \( -type f -o -type l \) -printf '%P\n') | sort |
        comm -23 - "$work/units.keep" | while read -r f; do rm -f "$r/usr/lib/systemd/system/$f"; done
    find "$r/usr" -type f \( -perm -u+x -o -name '*.so*' \) -exec ldd {} + 2> /dev/null |
        awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(/ { print $1 }' | sort -u |
        while read -r lib; do
            [ -e "$r$lib" ] || { mkdir -p "$r${lib%/*}" && cp -L "$lib" "$r$lib"; }
        done
    printf 'passwd: files systemd\ngroup: files systemd\nshadow: files\n' > "$r/etc/nsswitch.conf"
    printf 'messagebus:x:100:101::/nonexistent:/usr/sbin/nologin\n' >> "$r/etc/passwd"
    printf 'messagebus:x:101:\n' >> "$r/etc/group"
    ln -sf /usr/lib/systemd/system/multi-user.target "$r/etc/systemd/system/default.target"
    # No machine-id, as an image's first boot has none; the first-boot
    # wizard that would then wait on the console is masked, as an image's
    # is (Fedora CoreOS ships it disabled).
    ln -sf /dev/null "$r/etc/systemd/system/systemd-firstboot.service"
    # The presets of systemd's own list, then "disable *", as Fedora's
    # 99-default-disable.preset has it (Debian enables every unit).
    mkdir -p "$r/etc/systemd/system-preset"
    echo 'disable *' > "$r/etc/systemd/system-preset/99-default-disable.preset"
    cat > "$r/usr/libexec/flintvm-root" << 'END'
#!/bin/sh
echo "FLINTVM-ROOT: init reached, uptime $(busybox cut -d' ' -f1 /proc/uptime)" > /dev/console
END
    chmod 0755 "$r/usr/libexec/flintvm-root"
    cat > "$r/etc/systemd/system/flintvm-root.service" << 'END'
[Unit]
Description=flintvm: the real root reached multi-user.target
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/libexec/flintvm-root
ExecStart=/usr/bin/systemctl --no-block --force poweroff
END
    ln -s ../flintvm-root.service "$r/etc/systemd/system/multi-user.target.wants/flintvm-root.service"
    mb=$(($(du -sm "$r" | cut -f1) * 5 / 4 + 16))
    rm -f "$img"
    truncate -s "${mb}M" "$img"
    mkfs.ext4 -q -F -L flintroot -d "$r" "$img"
    echo "$mb"
}

rootmb=32
if [ -n "$sysd" ]; then
    rootmb=$(systemd_root "$out" "$out/rootfs.img")
else
    tests/vm/mkroot.sh "$out" "$out/rootfs.img" > /dev/null
fi
busybox httpd -f -p "127.0.0.1:$port" -h examples/demo-www 2> "$out/httpd.log" &
httpd=$!
trap 'kill "$httpd" 2> /dev/null || true' EXIT
sleep 0.2
kill -0 "$httpd" 2> /dev/null || die "cannot serve on 127.0.0.1:$port (in use?)"

# boot NAME INITRD LOG boots the demo once on fresh disks.
boot() {
    local disk=$out/root.img data=$out/data.img args="$extra ${own[$1]:-}"
    args=$(echo $args)
    rm -f "$disk" "$data"
    truncate -s $((rootmb + 32))M "$disk"
    sgdisk -n 1:2048:+${rootmb}M -t 1:8300 -c 1:root "$disk" > /dev/null
    dd if="$out/rootfs.img" of="$disk" bs=1M seek=1 conv=notrunc,sparse status=none
    truncate -s 256M "$data"
    timeout 600 qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 2 -nodefaults -nographic \
        -serial stdio -no-reboot -device virtio-rng-pci \
        -kernel "$kernel" -initrd "$2" \
        -append "console=ttyS0 panic=-1 root=LABEL=flintroot rd.shell=0 rd.emergency=poweroff printk.time=1 printk.devkmsg=on systemd.log_target=kmsg systemd.log_level=info ignition.firstboot ignition.platform.id=qemu${args:+ $args}" \
        -fw_cfg name=opt/com.coreos/config,file=examples/demo.ign \
        -drive "file=$disk,format=raw,if=virtio" -drive "file=$data,format=raw,if=virtio" \
        -netdev user,id=n0 -device virtio-net-pci,netdev=n0 < /dev/null 2>&1 |
        sed -e 's/\r//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' > "$3" || true
    grep -q "FLINTVM-ROOT: init reached" "$3" || die "boot $1: the root filesystem was not reached (console: $3)"
}

# stamps LOG prints "UNIT START END" for every unit of interest (flint's
# and Ignition's), "stage:S START END" for the unit of stage S whichever
# provisions, and the pseudo-units "total:basic-target" (kernel start to
# basic.target), "total:files-end" (to the files stage's end),
# "total:switch-root" and, with -s, "total:multi-user".
stamps() {
    awk '
    function stamp(line) { sub(/^\[ */, "", line); sub(/\].*/, "", line); return line + 0 }
    function unit(line,   u) {
        u = line; sub(/.*systemd\[1\]: (Starting|Finished|Started|Mounting|Mounted|Stopped|Stopping) /, "", u)
        sub(/ - .*/, "", u); sub(/\.\.\.$/, "", u); sub(/\.$/, "", u)
        return u
    }
    /systemd\[1\]: (Starting|Mounting) / {
        u = unit($0); if (!(u in start)) { start[u] = stamp($0); order[++k] = u } next
    }
    /systemd\[1\]: (Finished|Started|Mounted) / {
        u = unit($0); if (!(u in end)) end[u] = stamp($0)
        if (u == "flint-files.service" || u == "ignition-files.service") files = end[u]
        next
    }
    /systemd\[1\]: Reached target basic\.target/ { if (basic == "") basic = stamp($0) }
    /systemd\[1\]: Switching root/ { sw = stamp($0) }
    /systemd\[1\]: Reached target multi-user\.target/ { if (mu == "") mu = stamp($0) }
    END {
        for (i = 1; i <= k; i++) {
            u = order[i]
            if (u ~ /^(dracut-|flint-|ignition-|systemd-fsck|sysroot\.mount|initrd-switch-root|systemd-udev-trigger|systemd-networkd\.service)/ && (u in end))
                print u, start[u], end[u]
        }
        for (i = 1; i <= k; i++) {
            u = order[i]
            if (u ~ /^(flint|ignition)-(fetch-offline|fetch|kargs|disks|mount|files)\.service$/ && (u in end)) {
                s = u; sub(/^(flint|ignition)-/, "", s); sub(/\.service$/, "", s)
                print "stage:" s, start[u], end[u]
            }
        }
        if (basic != "") print "total:basic-target", 0, basic
        if (files != "") print "total:files-end", 0, files
        if (sw != "") print "total:switch-root", 0, sw
        if (mu != "") print "total:multi-user", 0, mu
    }' "$1"
}

results=$out/results.txt
: > "$results"
for ((round = 1; round <= n; round++)); do
    order=$(seq 0 $((${#imgs[@]} - 1)))
    # Every other round in the other order.
    ((round % 2 == 0)) && order=$(echo "$order" | tac)
    for i in $order; do
        log=$out/${names[$i]}.$round.console.log
        t0=$(date +%s%N)
        boot "${names[$i]}" "${imgs[$i]}" "$log"
        wall=$((($(date +%s%N) - t0) / 100000000))
        echo "round $round ${names[$i]}: $((wall / 10)).$((wall % 10)) s wall, load $(cut -d' ' -f1 /proc/loadavg), files stage ended at $(stamps "$log" | awk '$1 == "total:files-end" {print $3}') s"
        stamps "$log" | awk -v name="${names[$i]}" '{printf "%s %s %.3f\n", name, $1, $3 - $2}' >> "$results"
    done
done

# The medians, one column per initramfs, in boot order of the first; with
# two, each with its spread (min-max) and the second's median over the
# first's.
echo
awk -v names="${names[*]}" '
function sorted(list, a,   m, i, j, t) {
    m = split(list, a, " ")
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return m
}
function median(list,   a, m) { m = sorted(list, a); return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
function spread(list,   a, m) { m = sorted(list, a); return sprintf("%.2f-%.2f", a[1], a[m]) }
{
    if (!(($2) in seen)) { seen[$2] = 1; units[++k] = $2 }
    v[$1, $2] = v[$1, $2] " " $3; c[$1, $2]++
}
END {
    nn = split(names, nm, " ")
    w = nn == 2 ? 28 : 16
    printf "%-34s", "median seconds (runs)"
    for (j = 1; j <= nn; j++) printf " %" w "s", nm[j] (nn == 2 ? " (min-max)" : "")
    if (nn == 2) printf " %8s", "ratio"
    printf "\n"
    for (i = 1; i <= k; i++) {
        printf "%-34s", units[i]
        for (j = 1; j <= nn; j++) {
            if ((nm[j], units[i]) in c) {
                med[j] = median(v[nm[j], units[i]])
                if (nn == 2) printf " %8.3f (%11s) (%2d)", med[j], spread(v[nm[j], units[i]]), c[nm[j], units[i]]
                else printf " %10.3f (%2d)", med[j], c[nm[j], units[i]]
            } else { med[j] = ""; printf " %" w "s", "-" }
        }
        if (nn == 2 && med[1] != "" && med[2] != "" && med[1] > 0) printf " %8.2f", med[2] / med[1]
        printf "\n"
    }
}' "$results"
