#!/bin/bash
# The apply benchmark: `flint apply` of a Butane config onto a 2 GiB disk
# image (a GPT with one partition, ext4 on it as the root, a few hundred
# files of 4 KiB inline), timed with GNU time: wall, user and system CPU
# time, peak RSS; every run, then the medians with their spread (min-max),
# the date, the commit and the load average.
#
# usage: tests/bench/apply.sh [RUNS] [FILES]   (default 3 runs, 300 files;
#                                               needs root, losetup, mkfs.ext4
#                                               and GNU time)
#
# Each run starts from a new sparse image, so every run partitions and
# formats. The work is in $FLINT_BENCH_DIR (default tests/bench/out/apply).
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
runs="${1:-3}"
files="${2:-300}"
for n in "$runs" "$files"; do
	case "$n" in
	'' | *[!0-9]* | 0)
		echo "apply.sh: RUNS and FILES must be positive whole numbers, got '$n'" >&2
		exit 2
		;;
	esac
done
if [ "$(id -u)" != 0 ]; then
	echo "apply.sh: needs root (a loop device)" >&2
	exit 1
fi
gnu_time=/usr/bin/time
for tool in losetup mkfs.ext4 "$gnu_time"; do
	command -v "$tool" >/dev/null || {
		echo "apply.sh: $tool is needed" >&2
		exit 1
	}
done
dir="${FLINT_BENCH_DIR:-$root/tests/bench/out/apply}"
mkdir -p "$dir"
export PATH=/usr/local/go/bin:$PATH
go build -o "$dir/flint" ./cmd/flint

# The config: one disk, one partition, ext4 as /, FILES files of 4 KiB.
payload="$(head -c 3072 /dev/urandom | base64 -w0)"
{
	printf 'variant: fcos\nversion: 1.5.0\nstorage:\n'
	printf '  disks:\n    - device: /dev/vda\n      wipe_table: true\n'
	printf '      partitions:\n        - number: 1\n          label: root\n'
	printf '  filesystems:\n    - device: /dev/vda1\n      format: ext4\n      label: root\n      path: /\n'
	printf '  files:\n'
	for i in $(seq 1 "$files"); do
		printf '    - path: /srv/data/%d/file%d\n      mode: 0644\n      contents:\n        inline: "%s"\n' $((i % 16)) "$i" "$payload"
	done
} >"$dir/apply.bu"

echo "flint apply: 2 GiB image, 1 partition, ext4, $files files of 4 KiB; $(nproc) CPUs"
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), load average $(cut -d' ' -f1-3 /proc/loadavg) before"
printf '%-4s %8s %8s %8s %10s\n' run wall user sys "maxrss KiB"
for r in $(seq 1 "$runs"); do
	rm -f "$dir/disk.img"
	truncate -s 2G "$dir/disk.img"
	sync
	"$gnu_time" -f '%e %U %S %M' -o "$dir/time.$r" "$dir/flint" apply -disk "$dir/disk.img" "$dir/apply.bu" >/dev/null 2>"$dir/log.$r"
	read -r wall user sys rss <"$dir/time.$r"
	printf '%-4s %7ss %7ss %7ss %10s\n' "$r" "$wall" "$user" "$sys" "$rss"
done
# The medians (min-max) of wall time and CPU time (user + system).
for r in $(seq 1 "$runs"); do cat "$dir/time.$r"; done | awk -v avg="$(cut -d' ' -f1-3 /proc/loadavg)" '
function ms(a, m,   i, j, t) {
	for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return sprintf("%.2f s (%.2f-%.2f)", m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2, a[1], a[m])
}
{ w[NR] = $1; c[NR] = $2 + $3 }
END { printf "median of %d runs: wall %s, CPU (user+sys) %s; load average %s after\n", NR, ms(w, NR), ms(c, NR), avg }'
if losetup --associated "$dir/disk.img" | grep -q .; then
	echo "apply.sh: FAIL: the image is still attached" >&2
	exit 1
fi
