#!/bin/sh
# flint-installer: in a live environment, runs `flint install` from kernel
# arguments and installer config files, then reboots into the installed
# system, as coreos-installer.service's script does (coreos-installer,
# scripts/coreos-installer-service), so PXE menus written for it work:
#
#   coreos.inst.install_dev    the disk (a bare name gets /dev/ in front)
#   coreos.inst.ignition_url   the config (http allowed: --insecure-ignition;
#                              "skip" means none)
#   coreos.inst.image_url      the image
#   coreos.inst.platform_id    --platform
#   coreos.inst.save_partlabel, coreos.inst.save_partindex
#   coreos.inst.insecure       an image with neither signature nor hash
#   coreos.inst.skip_reboot    stay up after the install
#
# flint.inst.* are the same arguments under flint's name; of several, the
# last on the command line wins. Files in /etc/coreos/installer.d and
# /etc/flint/installer.d are --config-file's, in that order, each
# directory's files in name order. The network arguments of this boot
# (ip=, nameserver=, bond=, vlan=, BOOTIF, ...) go to the installed
# system's first boot (--firstboot-args "rd.neednet=1 ..."); s390x device
# arguments become permanent ones. A failure exits non-zero with flint's
# reason on the console and does not reboot.
#
# The FLINT_INSTALLER_* variables move its files and commands for tests
# (tests/blackbox/install_service_test.go).

set -eu

cmdline=${FLINT_INSTALLER_CMDLINE:-/proc/cmdline}
config_dirs=${FLINT_INSTALLER_CONFIG_DIRS:-/etc/coreos/installer.d /etc/flint/installer.d}
flint=${FLINT_INSTALLER_FLINT:-/usr/bin/flint}
systemctl=${FLINT_INSTALLER_SYSTEMCTL:-systemctl}
udevadm=${FLINT_INSTALLER_UDEVADM:-udevadm}

# The arguments the first boot keeps, as the script above lists them:
# the kernel's and dracut's network arguments (dracut.cmdline(7)), and
# s390x's device arguments, which stay for good.
persist_net="ipv6.disable net.ifnames net.naming-scheme ip ifname rd.route bootdev BOOTIF rd.bootif nameserver rd.peerdns biosdevname vlan bond team bridge rd.net.timeout.carrier coreos.no_persist_ip coreos.force_persist_ip"
persist_s390x="rd.dasd rd.zfcp rd.znet zfcp.allow_lun_scan cio_ignore"

set -f
# shellcheck disable=SC2046 # the command line is one line of words
set -- $(cat "$cmdline")
set +f
words="$*"

# karg NAME: the value of the last coreos.inst.NAME= or flint.inst.NAME=.
karg() {
    value=""
    for w in $words; do
        case ${w%%=*} in
            "coreos.inst.$1" | "flint.inst.$1")
                case $w in
                    *=*) value=${w#*=} ;;
                    *) value=1 ;;
                esac
                ;;
        esac
    done
    printf '%s' "$value"
}

# karg_bool NAME: set, and not "", 0, no or off.
karg_bool() {
    case $(karg "$1") in
        "" | 0 | no | off) return 1 ;;
        *) return 0 ;;
    esac
}

set -- install
have_config=0
for dir in $config_dirs; do
    for file in "$dir"/*; do
        if [ -f "$file" ]; then
            set -- "$@" --config-file "$file"
            have_config=1
        fi
    done
done

device=$(karg install_dev)
if [ -n "$device" ]; then
    case $device in
        */*) ;;
        *)
            echo "flint-installer: install_dev=$device without /dev/ is deprecated; using /dev/$device"
            device=/dev/$device
            ;;
    esac
    set -- "$@" "$device"
elif [ "$have_config" = 0 ]; then
    echo "flint-installer: no install device: give coreos.inst.install_dev= (or flint.inst.install_dev=)" >&2
    exit 1
fi

ignition_url=$(karg ignition_url)
if [ -n "$ignition_url" ] && [ "$ignition_url" != skip ]; then
    set -- "$@" --ignition-url "$ignition_url" --insecure-ignition
fi

firstboot=""
for w in $words; do
    for p in $persist_net; do
        case $w in
            "$p" | "$p"=*) firstboot="$firstboot$w " ;;
        esac
    done
    for p in $persist_s390x; do
        case $w in
            "$p" | "$p"=*) set -- "$@" --append-karg "$w" ;;
        esac
    done
done
if [ -n "$firstboot" ]; then
    set -- "$@" --firstboot-args "rd.neednet=1 $firstboot"
fi

for pair in image_url:--image-url platform_id:--platform save_partlabel:--save-partlabel save_partindex:--save-partindex; do
    value=$(karg "${pair%%:*}")
    if [ -n "$value" ]; then
        set -- "$@" "${pair#*:}" "$value"
    fi
done
if karg_bool insecure; then
    set -- "$@" --insecure
fi
# A failed download has nothing better to do than try again.
set -- "$@" --fetch-retries infinite

"$udevadm" settle || true
echo "flint-installer: flint $*"
"$flint" "$@"

# The installer config must not install again outside the live system.
for dir in $config_dirs; do
    rm -rf "$dir"
done

if karg_bool skip_reboot; then
    echo "flint-installer: installed; not rebooting (skip_reboot)"
    exit 0
fi
echo "flint-installer: installed; rebooting"
"$systemctl" --no-block reboot
