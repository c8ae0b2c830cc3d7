#!/bin/bash
# The live-ISO benchmark: the live boot to an installed, provisioned disk,
# N times, and the median and spread (min-max) of each part, from the
# consoles' stamps.
#
# usage: flock /tmp/flint-heavy.lock tests/bench/livebench.sh [N]
#        (default 3 rounds; needs root and what the VM tier's TestLive needs)
#
# It runs the VM tier's TestLive/iso-customize-bench (tests/vm): the live
# ISO of mklive.sh, `flint iso customize` with the install's disk, config,
# installer config and network keyfile, and, N times on a blank disk:
# QEMU boots the ISO from its El Torito record, the live system installs
# the OS image over HTTP from the test's server on 127.0.0.1 and reboots,
# and the disk's first boot through GRUB provisions the config (each round
# checked as TestLive checks it). Per round, in seconds:
#
#   total    the live boot's kernel start to the end of the installed
#            disk's files stage: live + pre + first
#   live     the live boot's kernel start to its reboot
#   install  `flint install --from-cmdline` in the live root, download,
#            decompression and write of the OS image included (inside
#            live; the uptimes the live root's init prints around it)
#   pre      the first boot's firmware and GRUB (its wall time less its
#            kernel's time to its power-off)
#   first    the first boot's kernel start to its files stage's end
#
# The guest's stamps are its own clock under emulation (QEMU TCG): compare
# them within one series, not across machines or loads. The last line is
# the whole run's wall and CPU time (the images' build included). The
# consoles are kept in tests/bench/out/live/consoles.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
n="${1:-3}"
case "$n" in
'' | *[!0-9]* | 0)
	echo "livebench.sh: N must be a positive whole number, got '$n'" >&2
	exit 2
	;;
esac
gnu_time=/usr/bin/time
command -v "$gnu_time" >/dev/null || {
	echo "livebench.sh: GNU time is needed at $gnu_time" >&2
	exit 1
}
export PATH=/usr/local/go/bin:$PATH
out=tests/bench/out/live
mkdir -p "$out"
log=$out/test.log

echo "live ISO → installed disk's files stage, $n rounds; $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before"
rc=0
rm -rf "$out/consoles"
mkdir -p "$out/consoles"
FLINT_LIVE_BENCH=$n FLINT_VM_LOGDIR=$root/$out/consoles "$gnu_time" -f '%e %U %S' -o "$out/time.txt" \
	go test -count=1 -v -timeout $((20 + n * 25))m -run 'TestLive/^iso-customize-bench$' ./tests/vm >"$log" 2>&1 || rc=$?
grep -o 'LIVEBENCH round=.*' "$log" || true
if [ "$rc" != 0 ] || [ "$(grep -c 'LIVEBENCH round=' "$log")" != "$n" ]; then
	echo "livebench.sh: the test failed or gave fewer than $n rounds (exit $rc); its output: $log" >&2
	tail -n 30 "$log" >&2
	exit 1
fi
grep -o 'LIVEBENCH round=.*' "$log" | awk -v avg="$(cut -d' ' -f1-3 /proc/loadavg)" '
function sorted(list, a,   m, i, j, t) {
	m = split(list, a, " ")
	for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return m
}
{
	for (i = 3; i <= NF; i++) {
		split($i, kv, "=")
		if (!(kv[1] in v)) keys[++k] = kv[1]
		v[kv[1]] = v[kv[1]] " " kv[2]
	}
}
END {
	printf "median seconds of %d rounds (min-max):\n", NR
	for (i = 1; i <= k; i++) {
		m = sorted(v[keys[i]], a)
		printf "  %-8s %7.2f (%.2f-%.2f)\n", keys[i], m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2, a[1], a[m]
	}
	printf "load average %s after\n", avg
}'
read -r wall user sys <"$out/time.txt"
echo "the whole run (build and $((n * 2)) boots): $wall s wall, $(echo "$user $sys" | awk '{ printf "%.1f", $1 + $2 }') s CPU (user + system)"
