#!/bin/bash
# Times `flint validate` on a large generated config and compares the medians
# with the reference implementation's and with flint's targets.
#
# usage: tests/bench/run.sh [RUNS]     (default 15 runs; also RUNS=N in the environment)
#
# Builds bin/flint (make build), writes tests/bench/out/large.ign with
# tests/bench/gen, checks flint accepts it, then runs `bin/flint validate` on
# it RUNS times under GNU time. Prints the median wall time and the median
# peak RSS, the ratio to Ignition's figures and PASS or FAIL for each
# target. Exits 1 if a target is missed.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

runs="${1:-${RUNS:-15}}"
case "$runs" in
'' | *[!0-9]* | 0)
	echo "run.sh: RUNS must be a positive whole number, got '$runs'" >&2
	exit 2
	;;
esac

# The reference implementation's validator (ignition-validate) on this same
# generated config: median wall time over repeated runs and median peak
# resident set size, as recorded for the project when flint's targets were
# set. Re-measure both if the generator's output changes.
ref_wall_s=0.69
ref_rss_mib=66

# flint's targets: a validator that is cheap enough to run on every config
# change and inside an initramfs with little memory.
target_wall_s=0.14
target_rss_mib=33

gnu_time=/usr/bin/time
if ! "$gnu_time" -f '%e' true >/dev/null 2>&1; then
	echo "run.sh: GNU time is needed at $gnu_time (Debian: apt-get install time)" >&2
	exit 1
fi

export PATH="$PATH:/usr/local/go/bin"
make --no-print-directory build
out=tests/bench/out
config="$out/large.ign"
mkdir -p "$out"
go run ./tests/bench/gen -o "$config"

# A benchmark of a rejected config would measure the wrong thing.
if ! bin/flint validate "$config" >"$out/report.txt"; then
	echo "run.sh: flint rejects the generated config; see $out/report.txt" >&2
	head -n 20 "$out/report.txt" >&2
	exit 1
fi

samples="$out/samples.txt"
: >"$samples"
for ((i = 1; i <= runs; i++)); do
	# -o keeps time's figures apart from anything flint prints.
	"$gnu_time" -f '%e %M' -o "$out/time.txt" bin/flint validate "$config" >/dev/null
	tail -n 1 "$out/time.txt" >>"$samples"
done

# median COLUMN: the median of one column of the samples.
median() {
	cut -d' ' -f"$1" "$samples" | sort -n | awk '
		{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

wall_s="$(median 1)"
rss_kib="$(median 2)"

awk -v runs="$runs" -v wall="$wall_s" -v rss_kib="$rss_kib" \
	-v ref_wall="$ref_wall_s" -v ref_rss="$ref_rss_mib" \
	-v max_wall="$target_wall_s" -v max_rss="$target_rss_mib" \
	-v size="$(wc -c <"$config")" '
function verdict(ok) { return ok ? "PASS" : "FAIL" }
function speedup(ref, got) { return got > 0 ? sprintf("%.1fx", ref / got) : "inf" }
BEGIN {
	rss = rss_kib / 1024
	printf "flint validate on %s (%.2f MB), %d runs\n", "tests/bench/out/large.ign", size / 1e6, runs
	printf "  median wall time   %6.2f s     reference %5.2f s     flint/reference %.2f (%s less)\n",
		wall, ref_wall, wall / ref_wall, speedup(ref_wall, wall)
	printf "  median peak RSS    %6.1f MiB   reference %5.1f MiB   flint/reference %.2f (%s less)\n",
		rss, ref_rss, rss / ref_rss, speedup(ref_rss, rss)
	ok_wall = wall < max_wall
	ok_rss = rss < max_rss
	printf "  %s  wall time < %.2f s\n", verdict(ok_wall), max_wall
	printf "  %s  peak RSS < %d MiB\n", verdict(ok_rss), max_rss
	exit !(ok_wall && ok_rss)
}'
