#!/bin/sh
# flint-neednet: run by flint-neednet.service when fetch-offline wrote
# /run/ignition/neednet. It brings the network up with systemd-networkd:
# the interfaces configured by ip= (systemd-network-generator), or, when
# the kernel command line configured none, DHCP on every Ethernet
# interface, as rd.neednet=1 ip=dhcp would. It does not wait for it: DHCP
# runs while the next stages work, and a stage that fetches waits for a
# route to its server itself (internal/resource: it tries again every
# 50 ms while connect(2) finds no route, and says so in its log). Waiting
# here held every later stage, the disks stage included, for DHCP: 1.3 s
# of a TCG VM's first boot (tests/vm/bootbench.sh). Distros whose
# initramfs uses another network handler replace this unit's ExecStart=
# (docs/distributor-notes.md).
#
# The FLINT_NEEDNET_* variables move its files for tests
# (tests/vm/neednet_test.go).
set -eu

run_dir=${FLINT_NEEDNET_RUN_DIR:-/run/systemd/network}
etc_dir=${FLINT_NEEDNET_ETC_DIR:-/etc/systemd/network}

if ! command -v networkctl > /dev/null 2>&1; then
    echo "flint-neednet: no systemd-networkd in this initramfs: relying on the distribution to bring the network up"
    exit 0
fi

# Whose .network files: the command line's (ip=), the image's, or ours.
network=none
for f in "$run_dir"/*.network "$etc_dir"/*.network; do
    [ -e "$f" ] && network=given
done
if [ "$network" = none ]; then
    [ -d "$run_dir" ] || mkdir -p "$run_dir"
    # printf, a shell builtin, not a here-document into cat: every
    # process started costs a tenth of a second in an emulated VM.
    printf '%s\n' "# Written by flint-neednet: the config needs the network and the kernel" \
        "# command line configured none." "[Match]" "Type=ether" "" "[Network]" "DHCP=yes" \
        > "$run_dir/90-flint-dhcp.network"
    network=ours
fi

echo "flint-neednet: the config needs the network: bringing it up"
# networkd reads the .network files when it starts: one that runs already
# (started by the netlink socket when the interfaces appeared) is
# restarted to read ours; with the given ones it only needs to be running. A
# restart, not networkctl reload: that goes through D-Bus, which the
# initramfs does not run. --no-block: the job is queued, not waited for.
action=start
[ "$network" = ours ] && action=restart
if ! systemctl --no-block "$action" systemd-networkd.service; then
    echo "flint-neednet: systemd-networkd could not be started: see journalctl -u systemd-networkd"
    exit 1
fi
