#!/bin/bash
# filesdisk.sh [-n RUNS] [-l] [-d DIR] REFERENCE
#
# The files stage as a first boot runs it (issue 29, goal 3), side by side
# with a reference binary given by path (Ignition, built by the person
# running this; see tests/bench/README.md). Not run by `make test`.
#
# Each run, for each side, in alternating order (odd rounds flint first,
# even rounds the reference first):
#   - an empty root on a dedicated loop-mounted ext4 filesystem (as
#     /sysroot is at boot), so that the final flush measures this stage's
#     writes and nothing else of the host's;
#   - two processes, as the units run them: `--stage=fetch` (platform
#     file, the config of tests/bench/gen without its users: 5,000 files
#     in 50 directories, 100 links, 200 units), which writes the config
#     cache, then `--stage=files` reading that cache into the root;
#   - then `sync -f` on the mount, so that both sides' writes are durable.
# The three commands run under one `sh -c` timed by /usr/bin/time: wall
# (%e) and CPU (%U + %S) include both stages and the flush.
#
# -l loads both cores for the whole series with `stress-ng --cpu 2`
# (bounded by its own --timeout), the way a first boot never has the
# cores to itself.
#
# Prints every run, then the medians of wall and CPU for each side and
# flint's ratio to the reference. Needs root (losetup, mount), mkfs.ext4,
# jq, /usr/bin/time (GNU time), and stress-ng for -l.
set -euo pipefail

cd "$(dirname "$0")/../.."
runs=9 load=0 dir=""
while getopts n:ld: opt; do
    case $opt in
        n) runs=$OPTARG ;;
        l) load=1 ;;
        d) dir=$OPTARG ;;
        *)
            echo "usage: $0 [-n RUNS] [-l] [-d DIR] REFERENCE" >&2
            exit 2
            ;;
    esac
done
shift $((OPTIND - 1))

die() {
    echo "filesdisk: $*" >&2
    exit 1
}

[ $# -eq 1 ] || die "usage: $0 [-n RUNS] [-l] [-d DIR] REFERENCE"
ref=$(realpath "$1")
[ -x "$ref" ] || die "$1: not an executable"
case $runs in '' | *[!0-9]* | 0) die "RUNS must be a positive whole number, got '$runs'" ;; esac
[ "$(id -u)" -eq 0 ] || die "needs root (losetup, mount)"
for tool in mkfs.ext4 jq losetup /usr/bin/time; do
    command -v "$tool" > /dev/null || die "needs $tool"
done
[ $load -eq 0 ] || command -v stress-ng > /dev/null || die "-l needs stress-ng"

export PATH="$PATH:/usr/local/go/bin"
make --no-print-directory build > /dev/null
flint=$PWD/bin/flint

work=$(mktemp -d "${dir:-${TMPDIR:-/tmp}}/filesdisk.XXXXXX")
mnt=$work/mnt loop="" stress=""
cleanup() {
    [ -z "$stress" ] || kill "$stress" 2> /dev/null || true
    mountpoint -q "$mnt" && umount "$mnt"
    [ -z "$loop" ] || losetup -d "$loop"
    rm -rf "$work"
}
trap cleanup EXIT

go run ./tests/bench/gen -o "$work/large.ign" > /dev/null 2>&1
jq -c 'del(.passwd)' "$work/large.ign" > "$work/config.ign"
mkdir -p "$work/none" "$mnt"
echo "ignition.platform.id=file" > "$work/cmdline"
# Both read the same variables: the config of the "file" platform, the
# kernel command line, and the base-config directories (empty here).
export IGNITION_CONFIG_FILE=$work/config.ign
export IGNITION_KERNEL_CMDLINE_PATH=$work/cmdline
export IGNITION_SYSTEM_CONFIG_DIR=$work/none
export IGNITION_SYSTEM_LOCAL_CONFIG_DIR=$work/none
export IGNITION_SYSTEM_RUNTIME_CONFIG_DIR=$work/none

truncate -s 2G "$work/fs.img"
mkfs.ext4 -q -F "$work/fs.img"
loop=$(losetup --show -f "$work/fs.img")
mount "$loop" "$mnt"

# cmdline SIDE RUN prints the shell command one side's run times: fetch
# (writes the config cache), files (reads it), flush. The cache and state
# files live in the run's directory, outside the root, as in /run.
cmdline() {
    local run=$mnt/$2 bin=$flint
    [ "$1" = flint ] || bin=$ref
    # --flag=value parses in both flag packages.
    local common="--platform=file --root=$run/sysroot --config-cache=$run/ignition.json --state-file=$run/state --neednet=$run/neednet --log-to-stdout"
    [ "$1" = flint ] && bin="$bin run"
    echo "$bin --stage=fetch $common > $run/fetch.log 2>&1 && $bin --stage=files $common > $run/files.log 2>&1 && sync -f $mnt"
}

if [ $load -eq 1 ]; then
    # Bounded by its own timeout too, should this script be killed.
    stress-ng --cpu 2 --timeout $((runs * 120))s > /dev/null 2>&1 &
    stress=$!
    sleep 1
fi

samples=$work/samples.txt
: > "$samples"
for ((r = 1; r <= runs; r++)); do
    sides="flint ref"
    ((r % 2 == 0)) && sides="ref flint"
    for side in $sides; do
        run=$side.$r
        mkdir -p "$mnt/$run/sysroot"
        sync -f "$mnt"
        /usr/bin/time -f '%e %U %S' -o "$work/time.txt" sh -c "$(cmdline "$side" "$run")" ||
            die "run $r, $side failed; see $mnt/$run/*.log (kept until exit)"
        n=$(find "$mnt/$run/sysroot" -type f | wc -l)
        [ "$n" -ge 5000 ] || die "run $r, $side wrote $n files, want at least 5000"
        read -r wall user sys < <(tail -n 1 "$work/time.txt")
        echo "$side $wall $(echo "$user $sys" | awk '{print $1 + $2}')" >> "$samples"
        echo "run $r $side: wall $wall s, cpu $user+$sys s, load $(cut -d' ' -f1 /proc/loadavg)"
        rm -rf "${mnt:?}/$run"
    done
    sync -f "$mnt"
done

awk -v loaded=$load '
function median(list,   a, m, i, j, t) {
    m = split(list, a, " ")
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
function lo(list,   a, m, i, x) { m = split(list, a, " "); x = a[1]; for (i = 2; i <= m; i++) if (a[i] < x) x = a[i]; return x }
function hi(list,   a, m, i, x) { m = split(list, a, " "); x = a[1]; for (i = 2; i <= m; i++) if (a[i] > x) x = a[i]; return x }
{ w[$1] = w[$1] " " $2; c[$1] = c[$1] " " $3 }
END {
    printf "fetch + files + sync -f, %s cores, medians (min-max)\n", loaded ? "loaded" : "idle"
    for (s = 1; s <= 2; s++) {
        side = s == 1 ? "flint" : "ref"
        printf "  %-5s wall %6.3f s (%.3f-%.3f)  cpu %6.3f s (%.3f-%.3f)\n", side,
            median(w[side]), lo(w[side]), hi(w[side]), median(c[side]), lo(c[side]), hi(c[side])
    }
    printf "  flint/ref: wall %.3f, cpu %.3f\n", median(w["flint"]) / median(w["ref"]), median(c["flint"]) / median(c["ref"])
}' "$samples"
