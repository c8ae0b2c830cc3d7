#!/bin/bash
# Measures the peak memory of `flint validate` and of the fetch-offline stage
# on large generated configs, against the budget of four times the config's
# size plus 16 MiB (issue 19).
#
# usage: tests/bench/memory.sh [RUNS]    (default 3 runs; also RUNS=N)
#
# Builds bin/flint (make build) unless FLINT names a binary to measure
# instead (an older build, say), writes the configs into tests/bench/out
# with tests/bench/gen, then runs each measurement RUNS times under GNU
# time and prints, for each, the median peak RSS, the budget and their
# ratio, the median wall and CPU (user + system) time, and PASS or FAIL.
# Exits 1 if a peak is over its budget.
#
# The configs:
#   large      the 2.6 MB config of run.sh (5,000 files with data URLs)
#   files400k  400,000 small files, 34 MB
#   files500k  500,000 small files, 43 MB
#   nested18m  18 MB of arrays nested 50 deep under an unknown key
#
# The fetch-offline stage runs as the distro's unit runs it, with the file
# platform ($IGNITION_CONFIG_FILE) and every path moved to a temporary
# directory: it reads the config, parses and validates it, and writes the
# cache. No root needed.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

runs="${1:-${RUNS:-3}}"
case "$runs" in
'' | *[!0-9]* | 0)
	echo "memory.sh: RUNS must be a positive whole number, got '$runs'" >&2
	exit 2
	;;
esac

gnu_time=/usr/bin/time
if ! "$gnu_time" -f '%e' true >/dev/null 2>&1; then
	echo "memory.sh: GNU time is needed at $gnu_time (Debian: apt-get install time)" >&2
	exit 1
fi

export PATH="$PATH:/usr/local/go/bin"
flint="${FLINT:-}"
if [ -z "$flint" ]; then
	make --no-print-directory build
	flint="$root/bin/flint"
fi
out=tests/bench/out
mkdir -p "$out"
gen() { # gen NAME ARGS...: writes $out/NAME.ign once
	local name="$1"
	shift
	[ -s "$out/$name.ign" ] || go run ./tests/bench/gen -o "$out/$name.ign" "$@"
}
gen large
gen files400k -files 400000
gen files500k -files 500000
gen nested18m -nested 18000000

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# measure KIND NAME: one run; appends "wall user sys maxrss_kib" to
# $work/KIND-NAME.
measure() {
	local kind="$1" name="$2" config="$root/$out/$2.ign"
	local t="$work/time.txt"
	case "$kind" in
	validate)
		# Exit status 1 is a config with errors: none of these has any.
		"$gnu_time" -f '%e %U %S %M' -o "$t" "$flint" validate "$config" >/dev/null
		;;
	fetch-offline)
		local run="$work/run"
		rm -rf "$run"
		mkdir -p "$run/none" "$run/root"
		: >"$run/cmdline"
		IGNITION_CONFIG_FILE="$config" IGNITION_KERNEL_CMDLINE_PATH="$run/cmdline" \
			IGNITION_SYSTEM_CONFIG_DIR="$run/none" IGNITION_SYSTEM_LOCAL_CONFIG_DIR="$run/none" \
			IGNITION_SYSTEM_RUNTIME_CONFIG_DIR="$run/none" \
			"$gnu_time" -f '%e %U %S %M' -o "$t" "$flint" run -platform file -stage fetch-offline \
			-root "$run/root" -config-cache "$run/ignition.json" -state-file "$run/state" \
			-neednet "$run/neednet" -log-to-stdout >"$run/log" 2>&1 || {
			echo "memory.sh: fetch-offline failed on $name:" >&2
			tail -n 5 "$run/log" >&2
			exit 1
		}
		;;
	esac
	tail -n 1 "$t" >>"$work/$kind-$name"
}

# median FILE COLUMN
median() {
	cut -d' ' -f"$2" "$1" | sort -n | awk '
		{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

failed=0
printf '%-14s %-10s %8s %10s %10s %6s %8s %8s\n' measure config MB "peak MiB" "budget" ratio "wall s" "cpu s"
for kind in validate fetch-offline; do
	for name in large files400k files500k nested18m; do
		for ((i = 1; i <= runs; i++)); do
			measure "$kind" "$name"
		done
		f="$work/$kind-$name"
		awk '{ print $2 + $3 }' "$f" >"$f.cpu"
		if ! awk -v kind="$kind" -v name="$name" -v size="$(wc -c <"$out/$name.ign")" \
			-v wall="$(median "$f" 1)" -v cpu="$(median "$f.cpu" 1)" -v rss_kib="$(median "$f" 4)" '
			BEGIN {
				rss = rss_kib / 1024
				budget = (4 * size + 16 * 1048576) / 1048576
				ok = rss <= budget
				printf "%-14s %-10s %8.1f %10.1f %10.1f %6.2f %8.2f %8.2f  %s\n",
					kind, name, size / 1e6, rss, budget, rss / budget, wall, cpu, ok ? "PASS" : "FAIL"
				exit !ok
			}'; then
			failed=1
		fi
	done
done
echo "($runs runs each; medians; budget = 4 x config size + 16 MiB)"
exit "$failed"
