#!/bin/bash
# mkinitrd.sh FLINT KVER WORKDIR OUTPUT [EXTRA_MODULE_DIR...]
#
# Builds a dracut initramfs with the repository's dracut/30flint module and
# the flint binary FLINT, for the kernel KVER, without writing anything
# under /usr: dracut runs from a scratch copy of /usr/lib/dracut in WORKDIR
# (dracutbasedir), with the module copied into its modules.d and the
# binary beside module-setup.sh. Extra module directories (the VM tests'
# probes) are added the same way.
#
# With FLINT_INSTALLED=DIR, the DESTDIR of a `make install`, the module is
# the one installed in DIR, as a distro's package installs it, and FLINT
# is "-": module-setup.sh finds DIR's usr/bin/flint on dracut's PATH, as
# it finds /usr/bin/flint on a host with the package (the VM tests build
# every image this way).
#
# The image is not compressed (building it is faster, and booting it too:
# the kernel unpacks a plain cpio faster than TCG decompresses zstd) and
# has no NIC drivers but virtio_net, a third of the image otherwise. The
# host's dracut.conf.d stays out (Debian's pulls in ifcfg).
#
# $FLINT_MKINITRD_MODULE names the module that provisions instead of flint
# (the ignition-module scenario: a distro's module kept under Ignition's
# names, given as an extra module directory); flint's own is then left out.
#
# It fails when dracut logs an error: a failed inst_multiple leaves dracut's
# exit status 0 and a partial image.
set -euo pipefail

if [ $# -lt 4 ]; then
    echo "usage: $0 FLINT KVER WORKDIR OUTPUT [EXTRA_MODULE_DIR...]" >&2
    exit 2
fi
# Absolute paths: dracut changes directory while it works.
flint=$1
if [ "$flint" != - ]; then flint=$(realpath "$flint"); fi
kver=$2 work=$(realpath -m "$3") out=$(realpath -m "$4")
shift 4
repo=$(cd "$(dirname "$0")/../.." && pwd)

rm -rf "$work/dracut" "$work/dracut.conf.d" "$work/dracut-tmp"
mkdir -p "$work/dracut.conf.d" "$work/dracut-tmp"
cp -a /usr/lib/dracut "$work/dracut"
if [ -n "${FLINT_INSTALLED:-}" ]; then
    installed=$(realpath "$FLINT_INSTALLED")
    if [ ! -x "$installed/usr/bin/flint" ] || [ ! -d "$installed/usr/lib/dracut/modules.d/30flint" ]; then
        echo "mkinitrd.sh: $installed holds no make install (usr/bin/flint, usr/lib/dracut/modules.d/30flint)" >&2
        exit 1
    fi
    cp -a "$installed/usr/lib/dracut/modules.d/30flint" "$work/dracut/modules.d/30flint"
    # dracut sets its own PATH from DRACUT_PATH (default /sbin /bin
    # /usr/sbin /usr/bin): DIR's usr/bin first, where a package's flint
    # would be /usr/bin's.
    export DRACUT_PATH="$installed/usr/bin /sbin /bin /usr/sbin /usr/bin"
else
    cp -a "$repo/dracut/30flint" "$work/dracut/modules.d/30flint"
    cp "$flint" "$work/dracut/modules.d/30flint/flint"
fi
main=${FLINT_MKINITRD_MODULE:-flint}
modules="systemd systemd-initrd systemd-udevd dracut-systemd base $main"
for extra in "$@"; do
    name=$(basename "$extra")
    cp -a "$extra" "$work/dracut/modules.d/$name"
    modules+=" ${name#[0-9][0-9]}"
done

# Every Ethernet and PHY driver of the kernel (virtio_net is elsewhere).
omit=$(sed -n -E 's#^([^:]*/drivers/net/(ethernet|phy)/[^:]*)\.ko[^:]*:.*#\1#p' "/lib/modules/$kver/modules.dep" \
    | sed 's|.*/||; s|-|_|g' | tr '\n' ' ')
echo "omit_drivers+=\" $omit \"" > "$work/dracut.conf.d/omit-nics.conf"

log=$work/dracut.log
if ! dracutbasedir="$work/dracut" dracut --force --conf /dev/null --confdir "$work/dracut.conf.d" \
    --no-hostonly --no-hostonly-cmdline --kver "$kver" --tmpdir "$work/dracut-tmp" \
    -m "$modules" --no-compress "$out" > "$log" 2>&1; then
    cat "$log" >&2
    echo "mkinitrd.sh: dracut failed (log above)" >&2
    exit 1
fi
if grep -E 'ERROR|FAILED' "$log" >&2; then
    echo "mkinitrd.sh: dracut logged errors (above; full log in $log): the image is incomplete" >&2
    exit 1
fi
if ! grep -qE "Including module: $main( |$)" "$log"; then
    cat "$log" >&2
    echo "mkinitrd.sh: dracut left the $main module out (log above)" >&2
    exit 1
fi
