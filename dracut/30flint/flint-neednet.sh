#!/bin/sh
# flint-neednet: run by flint-neednet.service when fetch-offline wrote
# /run/ignition/neednet. It brings the network up with systemd-networkd:
# the interfaces configured by ip= (systemd-network-generator), or, when
# the kernel command line configured none, DHCP on every Ethernet
# interface, as rd.neednet=1 ip=dhcp would. Then it waits until one is
# routable. Distros whose initramfs uses another network handler replace
# this unit's ExecStart= (docs/distributor-notes.md).
set -eu

if ! command -v networkctl > /dev/null 2>&1; then
    echo "flint-neednet: no systemd-networkd in this initramfs: relying on the distribution to bring the network up"
    exit 0
fi

configured=no
for f in /run/systemd/network/*.network /etc/systemd/network/*.network; do
    [ -e "$f" ] && configured=yes
done
if [ "$configured" = no ]; then
    [ -d /run/systemd/network ] || mkdir -p /run/systemd/network
    # printf, a shell builtin, not a here-document into cat: every
    # process started costs a tenth of a second in an emulated VM.
    printf '%s\n' "# Written by flint-neednet: the config needs the network and the kernel" \
        "# command line configured none." "[Match]" "Type=ether" "" "[Network]" "DHCP=yes" \
        > /run/systemd/network/90-flint-dhcp.network
fi

echo "flint-neednet: the config needs the network: bringing it up"
# A restart, not networkctl reload: that goes through D-Bus, which the
# initramfs may not run. networkd reads the .network files when it starts.
if ! systemctl restart systemd-networkd.service; then
    echo "flint-neednet: systemd-networkd did not start: see journalctl -u systemd-networkd"
    exit 1
fi
for dir in /usr/lib/systemd /lib/systemd; do
    if [ -x "$dir/systemd-networkd-wait-online" ]; then
        if "$dir/systemd-networkd-wait-online" --any --operational-state=routable --timeout=120; then
            echo "flint-neednet: the network is up"
            exit 0
        fi
        echo "flint-neednet: no interface got a routable address within 120 s: see journalctl -u systemd-networkd"
        exit 1
    fi
done
echo "flint-neednet: no systemd-networkd-wait-online: not waiting for the network"
