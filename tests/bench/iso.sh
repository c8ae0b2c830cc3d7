#!/bin/bash
# Times `flint iso ignition embed` and `flint iso customize` on a 1 GiB live
# ISO against a plain `cp` of it: wall time, CPU time (user + system) and
# peak RSS, medians with their spread (min-max) over RUNS runs, to a new
# file (-o FILE) and in place. The commands alternate run by run, so that a
# change of the host's load affects them alike.
#
# usage: tests/bench/iso.sh [RUNS]     (default 5 runs; also RUNS=N in the environment)
#
# Builds bin/flint (make build) and, with xorriso, tests/bench/out/live.iso:
# a live ISO in Fedora CoreOS's current layout (igninfo.json, kargs.json,
# features.json, a 256 KiB images/ignition.img, kargs areas in grub.cfg and
# isolinux.cfg) whose images/pxeboot/rootfs.img fills it to 1 GiB with
# data (a real file on disk, not a sparse one). Both cp and flint read the
# ISO from the page cache. Exits 1 if a target is missed: -o FILE within
# 1.1 times cp's wall time, in place within 0.1 s.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

runs="${1:-${RUNS:-5}}"
case "$runs" in
'' | *[!0-9]* | 0)
	echo "iso.sh: RUNS must be a positive whole number, got '$runs'" >&2
	exit 2
	;;
esac

target_ratio=1.10
target_inplace_s=0.10

gnu_time=/usr/bin/time
if ! "$gnu_time" -f '%e' true >/dev/null 2>&1; then
	echo "iso.sh: GNU time is needed at $gnu_time (Debian: apt-get install time)" >&2
	exit 1
fi
if ! command -v xorriso >/dev/null; then
	echo "iso.sh: xorriso is needed to build the ISO (Debian: apt-get install xorriso)" >&2
	exit 1
fi

export PATH="$PATH:/usr/local/go/bin"
make --no-print-directory build
out=tests/bench/out/iso
mkdir -p "$out"
iso="$out/live.iso"
if [ ! -s "$iso" ]; then
	tree="$out/tree"
	rm -rf "$tree"
	mkdir -p "$tree/coreos" "$tree/images/pxeboot" "$tree/EFI/fedora" "$tree/isolinux"
	def="coreos.liveiso=bench ignition.firstboot ignition.platform.id=metal"
	size=1024
	area="$def"$'\n'"$(head -c $((size - ${#def} - 1)) /dev/zero | tr '\0' '#')"
	prefix="linux /images/pxeboot/vmlinuz "
	printf '%s%s\n' "$prefix" "$area" >"$tree/EFI/fedora/grub.cfg"
	printf '%s\n' "$area" >"$tree/isolinux/isolinux.cfg"
	printf '{"default": "%s", "size": %d, "files": [{"path": "EFI/fedora/grub.cfg", "offset": %d}, {"path": "isolinux/isolinux.cfg", "offset": 0}]}\n' \
		"$def" "$size" "${#prefix}" >"$tree/coreos/kargs.json"
	echo '{"file": "images/ignition.img"}' >"$tree/coreos/igninfo.json"
	echo '{"installer-config": true, "installer-config-directives": {"console": true}, "live-initrd-network": true}' >"$tree/coreos/features.json"
	head -c $((256 << 10)) /dev/zero >"$tree/images/ignition.img"
	echo kernel >"$tree/images/pxeboot/vmlinuz"
	# Data that does not compress away or read as holes.
	head -c $((1023 << 20)) <(yes 'flint iso benchmark root filesystem') >"$tree/images/pxeboot/rootfs.img"
	xorriso -as mkisofs -R -J -V bench -o "$iso" "$tree" 2>/dev/null
	rm -rf "$tree"
fi

cfg="$out/config.ign"
echo '{"ignition": {"version": "3.4.0"}, "storage": {"files": [{"path": "/etc/motd", "contents": {"source": "data:,hello"}}]}}' >"$cfg"
key="$out/eth0.nmconnection"
printf '[connection]\nid=eth0\ntype=ethernet\n' >"$key"
work="$out/work.iso"
cp "$iso" "$work"
cat "$iso" >/dev/null

samples="$out/samples.txt"
: >"$samples"
# measure NAME COMMAND...: one sample of wall time, CPU time and peak RSS (KiB).
measure() {
	local name="$1"
	shift
	rm -f "$out/copy.iso"
	# The last copy's 1 GiB of dirty pages are written back before this
	# command starts, not during it.
	sync
	"$gnu_time" -f '%e %U %S %M' -o "$out/time.txt" "$@" >/dev/null 2>&1
	echo "$name $(tail -n 1 "$out/time.txt")" >>"$samples"
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((i = 1; i <= runs; i++)); do
	measure cp cp "$iso" "$out/copy.iso"
	measure embed-file bin/flint iso ignition embed -f -i "$cfg" -o "$out/copy.iso" "$iso"
	measure embed-inplace bin/flint iso ignition embed -f -i "$cfg" "$work"
	measure customize-file bin/flint iso customize -f --dest-device /dev/vda --dest-ignition "$cfg" --network-keyfile "$key" -o "$out/copy.iso" "$iso"
	measure customize-inplace bin/flint iso customize -f --dest-device /dev/vda --dest-ignition "$cfg" --network-keyfile "$key" "$work"
done
rm -f "$out/copy.iso" "$work"

# summary NAME: "median min max" of wall time, of CPU time (user + system)
# and of peak RSS, over NAME's samples.
summary() {
	awk -v n="$1" '$1 == n { print $2, $3 + $4, $5 }' "$samples" | awk '
	function ms(a, m,   i, j, t) {
		for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		return (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2) " " a[1] " " a[m]
	}
	{ w[NR] = $1; c[NR] = $2; r[NR] = $3 }
	END { print ms(w, NR), ms(c, NR), ms(r, NR) }'
}

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) CPUs, load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
{
	echo "cp ISO COPY|$(summary cp)"
	echo "iso ignition embed -o FILE|$(summary embed-file)"
	echo "iso ignition embed (in place)|$(summary embed-inplace)"
	echo "iso customize -o FILE|$(summary customize-file)"
	echo "iso customize (in place)|$(summary customize-inplace)"
} | awk -F'|' -v runs="$runs" -v size="$(stat -c %s "$iso")" \
	-v ratio="$target_ratio" -v inplace="$target_inplace_s" '
function verdict(ok) { return ok ? "PASS" : "FAIL" }
BEGIN {
	printf "a %.2f GiB live ISO, medians of %d runs (min-max)\n", size / 2^30, runs
	printf "  %-31s %21s %21s %11s\n", "", "wall s", "CPU s (user+sys)", "peak RSS"
}
{
	split($2, v, " ")
	printf "  %-31s %6.3f (%5.3f-%5.3f) %6.3f (%5.3f-%5.3f) %7.1f MiB\n", $1, v[1], v[2], v[3], v[4], v[5], v[6], v[7] / 1024
	wall[NR] = v[1]
}
END {
	cp = wall[1]; ef = wall[2]; ei = wall[3]; cf = wall[4]; ci = wall[5]
	ok1 = ef <= cp * ratio || ef <= 0.05
	ok2 = cf <= cp * ratio || cf <= 0.05
	ok3 = ei <= inplace
	ok4 = ci <= inplace
	printf "  %s  embed -o FILE <= %.2f x cp\n", verdict(ok1), ratio
	printf "  %s  customize -o FILE <= %.2f x cp\n", verdict(ok2), ratio
	printf "  %s  embed in place <= %.2f s\n", verdict(ok3), inplace
	printf "  %s  customize in place <= %.2f s\n", verdict(ok4), inplace
	exit !(ok1 && ok2 && ok3 && ok4)
}'
