#!/bin/bash
# Times `flint translate` on a large generated Butane config: whole-process
# wall time, CPU time and peak memory, medians over RUNS runs.
#
# usage: tests/bench/butane.sh [RUNS]     (default 15 runs; also RUNS=N in the environment)
#
# Builds bin/flint (make build), writes tests/bench/out/large.bu with
# tests/bench/genbutane (2,000 files with inline contents, 100 units with
# drop-ins, 20 users, a mount unit), checks flint translates it, then runs
# `bin/flint translate` on it RUNS times under GNU time. Exits 1 if a
# target is missed. On a busy machine the wall time measures the other
# processes too: the CPU time (user + system) is printed beside it.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

runs="${1:-${RUNS:-15}}"
case "$runs" in
'' | *[!0-9]* | 0)
	echo "butane.sh: RUNS must be a positive whole number, got '$runs'" >&2
	exit 2
	;;
esac

# flint's targets for translating this config (issue 16).
target_wall_s=0.10
target_rss_mib=64

gnu_time=/usr/bin/time
if ! "$gnu_time" -f '%e' true >/dev/null 2>&1; then
	echo "butane.sh: GNU time is needed at $gnu_time (Debian: apt-get install time)" >&2
	exit 1
fi

export PATH="$PATH:/usr/local/go/bin"
make --no-print-directory build
out=tests/bench/out
config="$out/large.bu"
mkdir -p "$out"
go run ./tests/bench/genbutane -o "$config"

if ! bin/flint translate "$config" >"$out/large-from-butane.ign" 2>"$out/translate-report.txt"; then
	echo "butane.sh: flint does not translate the generated config; see $out/translate-report.txt" >&2
	head -n 20 "$out/translate-report.txt" >&2
	exit 1
fi

samples="$out/butane-samples.txt"
: >"$samples"
for ((i = 1; i <= runs; i++)); do
	"$gnu_time" -f '%e %U %S %M' -o "$out/time.txt" bin/flint translate "$config" >/dev/null
	tail -n 1 "$out/time.txt" | awk '{ print $1, $2 + $3, $4 }' >>"$samples"
done

median() {
	cut -d' ' -f"$1" "$samples" | sort -n | awk '
		{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

awk -v runs="$runs" -v wall="$(median 1)" -v cpu="$(median 2)" -v rss_kib="$(median 3)" \
	-v max_wall="$target_wall_s" -v max_rss="$target_rss_mib" \
	-v size="$(wc -c <"$config")" '
function verdict(ok) { return ok ? "PASS" : "FAIL" }
BEGIN {
	rss = rss_kib / 1024
	printf "flint translate on %s (%.2f MB), %d runs\n", "tests/bench/out/large.bu", size / 1e6, runs
	printf "  median wall time   %6.3f s\n", wall
	printf "  median CPU time    %6.3f s (user + system, all threads)\n", cpu
	printf "  median peak RSS    %6.1f MiB\n", rss
	ok_wall = wall < max_wall
	ok_rss = rss < max_rss
	printf "  %s  wall time < %.2f s\n", verdict(ok_wall), max_wall
	printf "  %s  peak RSS < %d MiB\n", verdict(ok_rss), max_rss
	exit !(ok_wall && ok_rss)
}'
