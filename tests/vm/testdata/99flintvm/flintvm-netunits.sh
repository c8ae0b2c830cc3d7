#!/bin/sh
# Reads flintvm.netunits=URL from the kernel command line; see
# flintvm-netunits.service. Every result line starts with FLINTVM-NET.
set -u
say() { echo "FLINTVM-NET: $*"; }

url=""
# shellcheck disable=SC2013 # the command line is one line of words
for word in $(cat /proc/cmdline); do
    case $word in flintvm.netunits=*) url=${word#flintvm.netunits=} ;; esac
done
dir=/run/systemd/network
flint agent network-units -platform digitalocean -endpoint "$url" -log-to-stdout "$dir" 2>&1 | sed 's/^/FLINTVM-NET: agent: /'
for f in "$dir"/*; do say "file ${f##*/}"; done
iface=""
for n in /sys/class/net/*; do
    [ "$(cat "$n/address")" = 52:54:00:12:34:56 ] && iface=${n##*/}
done
[ -n "$iface" ] || { say "no interface with the QEMU NIC's MAC address"; exit 1; }
# networkd reads its units when it starts (no D-Bus here for networkctl
# reload): restart it, then read its state file of the link.
systemctl restart systemd-networkd.service
state=/run/systemd/netif/links/$(cat "/sys/class/net/$iface/ifindex")
has() { [ -n "$(sed -n "/$1/p" "$2" 2>/dev/null)" ]; }
i=0
while [ $i -lt 30 ]; do
    has '^ADMIN_STATE=configured' "$state" && has '10\.0\.2\.77' /proc/net/fib_trie && break
    sleep 1
    i=$((i + 1))
done
sed 's/^/FLINTVM-NET: link: /' "$state"
has '10\.0\.2\.77' /proc/net/fib_trie && say "address 10.0.2.77 on $iface"
say "done"
