#!/bin/bash
# The install benchmark: `flint install` of a 1 GiB xz-compressed image of
# realistic content from an HTTP server on 127.0.0.1 onto a loop device,
# side by side with the pipeline it replaces:
#
#   curl -s URL | xz -dc | dd of=DEV bs=1M oflag=direct conv=fsync
#
# usage: tests/bench/install.sh [RUNS]   (default 3; needs root, curl, xz,
#                                        losetup and GNU time)
#
# The image is 1 GiB of a tar stream of this machine's /usr (programs,
# libraries, data: what an OS image holds), cut into four 256 MiB parts,
# each compressed with xz -6 (one stream each, as xz -T makes independent
# blocks), concatenated. It is made once in $FLINT_BENCH_DIR (default
# tests/bench/out/install) and reused. Each run alternates which of the two
# goes first. Prints every run, the medians of wall time and peak RSS,
# flint's ratio to the pipeline, and PASS or FAIL for the targets: wall
# time at most 1.1 times the pipeline's, peak RSS under 64 MiB.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
runs="${1:-${RUNS:-3}}"
case "$runs" in
'' | *[!0-9]* | 0)
	echo "install.sh: RUNS must be a positive whole number, got '$runs'" >&2
	exit 2
	;;
esac
if [ "$(id -u)" != 0 ]; then
	echo "install.sh: needs root (a loop device)" >&2
	exit 1
fi
gnu_time=/usr/bin/time
for tool in curl xz losetup "$gnu_time"; do
	command -v "$tool" >/dev/null || {
		echo "install.sh: $tool is needed" >&2
		exit 1
	}
done

dir="${FLINT_BENCH_DIR:-$root/tests/bench/out}/install"
mkdir -p "$dir/www"
image="$dir/www/os.raw.xz"
if [ ! -s "$image" ]; then
	echo "making the image (4 x 256 MiB of /usr, xz -6; slow, once)" >&2
	tar cf - /usr 2>/dev/null | head -c $((1 << 30)) >"$dir/os.raw"
	rm -f "$image.tmp"
	for i in 0 1 2 3; do
		dd if="$dir/os.raw" bs=1M skip=$((i * 256)) count=256 status=none | xz -T1 -6 >>"$image.tmp"
	done
	mv "$image.tmp" "$image"
	rm -f "$dir/os.raw"
fi
size=$(stat -c %s "$image")
hash="sha256-$(sha256sum "$image" | cut -d' ' -f1)"

make -s build
go build -o "$dir/imgserve" ./tests/bench/imgserve

"$dir/imgserve" "$dir/www" >"$dir/url" &
server=$!
truncate -s 1100M "$dir/target.img"
dev=$(losetup -f --show -P "$dir/target.img")
cleanup() {
	kill "$server" 2>/dev/null || true
	losetup -d "$dev" || true
	rm -f "$dir/target.img"
}
trap cleanup EXIT
for _ in $(seq 50); do
	[ -s "$dir/url" ] && break
	sleep 0.1
done
url="$(head -1 "$dir/url")os.raw.xz"
echo "image: $size bytes compressed, 1 GiB raw; target $dev; $runs runs" >&2

pipeline() {
	"$gnu_time" -f '%e %M' -o "$dir/t" bash -c "curl -s '$url' | xz -dc | dd of=$dev bs=1M oflag=direct conv=fsync status=none"
	cat "$dir/t"
}
flint() {
	"$gnu_time" -f '%e %M' -o "$dir/t" bin/flint install --image-url "$url" --image-hash "$hash" "$dev" 2>"$dir/flint.log" || {
		cat "$dir/flint.log" >&2
		exit 1
	}
	cat "$dir/t"
}

p_wall=() p_rss=() f_wall=() f_rss=()
for i in $(seq "$runs"); do
	if [ $((i % 2)) = 1 ]; then
		read -r pw pr < <(pipeline)
		read -r fw fr < <(flint)
	else
		read -r fw fr < <(flint)
		read -r pw pr < <(pipeline)
	fi
	p_wall+=("$pw") p_rss+=("$pr") f_wall+=("$fw") f_rss+=("$fr")
	printf 'run %d: pipeline %6.2f s %6d KiB   flint %6.2f s %6d KiB\n' "$i" "$pw" "$pr" "$fw" "$fr"
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
pw=$(median "${p_wall[@]}") pr=$(median "${p_rss[@]}")
fw=$(median "${f_wall[@]}") fr=$(median "${f_rss[@]}")
ratio=$(awk -v f="$fw" -v p="$pw" 'BEGIN {printf "%.2f", f / p}')
fr_mib=$(awk -v r="$fr" 'BEGIN {printf "%.1f", r / 1024}')
printf 'median: pipeline %.2f s, peak RSS %.1f MiB (largest process)\n' "$pw" "$(awk -v r="$pr" 'BEGIN {print r / 1024}')"
printf 'median: flint    %.2f s, peak RSS %s MiB; %s x the pipeline\n' "$fw" "$fr_mib" "$ratio"
status=0
if awk -v r="$ratio" 'BEGIN {exit !(r <= 1.1)}'; then echo "PASS wall time <= 1.1 x pipeline"; else echo "FAIL wall time <= 1.1 x pipeline"; status=1; fi
if awk -v r="$fr" 'BEGIN {exit !(r < 64 * 1024)}'; then echo "PASS peak RSS < 64 MiB"; else echo "FAIL peak RSS < 64 MiB"; status=1; fi
exit "$status"
