#!/bin/bash
# The report benchmark: what the first-boot report (flint-report.service,
# flint.report.url=, docs/reports.md) costs a boot.
#
# usage: flock /tmp/flint-heavy.lock tests/bench/reportbench.sh [-n N] [-s] [INITRD]
#        (default 5 rounds; the initramfs of this tree unless INITRD is given;
#        needs root and what tests/vm/bootbench.sh needs)
#
# It starts reportsink, a collector on 127.0.0.1 (the guest reaches it at
# the QEMU user network's 10.0.2.2), and runs tests/vm/bootbench.sh on the
# same initramfs under two names, their boots alternating: "plain" without
# a report URL, "report" with flint.report.url= naming the collector. In
# bootbench's table, flint-report.service is the report's own time (its
# unit's start to its end: the report's assembly, the POST and the
# answer; in "plain" the unit runs and finds nothing to send), and the
# rows total:switch-root (and, with -s, the real root with systemd,
# total:multi-user) show what it adds to the boot: the unit is ordered
# before initrd.target, so the switch to the real root waits for it. The
# last line counts the reports the collector took (one per "report" boot
# is wanted).
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
n=5 sysd=()
while getopts n:s opt; do
	case $opt in
	n) n=$OPTARG ;;
	s) sysd=(-s) ;;
	*)
		echo "usage: $0 [-n N] [-s] [INITRD]" >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
img="${1:--}"
export PATH=/usr/local/go/bin:$PATH
out=bin/reportbench
mkdir -p "$out"
go build -o "$out/reportsink" ./tests/bench/reportsink
"$out/reportsink" >"$out/sink.log" 2>&1 &
sink=$!
trap 'kill "$sink" 2>/dev/null || true' EXIT
for _ in 1 2 3 4 5 6 7 8 9 10; do
	[ -s "$out/sink.log" ] && break
	sleep 0.1
done
port=$(head -n 1 "$out/sink.log")
case "$port" in
'' | *[!0-9]*)
	echo "reportbench.sh: the collector did not start: $(cat "$out/sink.log")" >&2
	exit 1
	;;
esac

echo "the first-boot report, $n rounds; $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before"
tests/vm/bootbench.sh -n "$n" "${sysd[@]}" -o "$out/boots" \
	-A "report=flint.report.url=http://10.0.2.2:$port/report" plain="$img" report="$img"
got=$(grep -c '^report ' "$out/sink.log" || true)
echo "the collector took $got reports from $n boots with flint.report.url= (load average $(cut -d' ' -f1-3 /proc/loadavg) after)"
[ "$got" = "$n" ] || {
	echo "reportbench.sh: FAIL: want $n reports" >&2
	exit 1
}
