#!/bin/bash
# tests/pkg/deb.sh: builds flint's Debian packages (debian/) offline with
# dpkg-buildpackage, checks them with lintian (no errors allowed), and, as
# root on a machine without flint installed, installs them with dpkg -i
# and purges them, checking that every file was there and that nothing is
# left. The packages are left in bin/deb (OUT=DIR for another place).
# `make deb` runs it; the pkg tier of `make test` too.
#
# Needs dpkg-dev, debhelper, fakeroot and lintian (.ci/run installs them);
# without them it says so and exits 0, as the other tiers skip.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$repo/bin/deb}
export PATH="/usr/local/go/bin:$PATH"

missing=""
for tool in dpkg-buildpackage dh fakeroot lintian go git; do
    command -v "$tool" > /dev/null || missing+=" $tool"
done
if [[ -n $missing ]]; then
    echo "deb: skipped: missing$missing (Debian: dpkg-dev debhelper fakeroot lintian)"
    exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# dpkg-buildpackage writes into the source tree and its parent: build a
# copy of what git tracks (and what it would add), as a source package has.
mkdir "$work/flint"
(
    cd "$repo"
    git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do
            if [[ -e $f || -L $f ]]; then printf '%s\0' "$f"; fi
        done |
        tar --null -T - -cf -
) | tar -xf - -C "$work/flint"

# Offline: every module in the cache first, then no network (debian/rules
# sets GOPROXY=off).
(cd "$repo" && go mod download)

t0=$(date +%s)
(
    cd "$work/flint"
    # -d: Go 1.26 is /usr/local/go here, not Debian's golang-go.
    # nocheck: make test runs the unit tier already.
    DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b -d > "$work/build.log" 2>&1
) || {
    tail -50 "$work/build.log"
    echo "deb: dpkg-buildpackage failed (log above)"
    exit 1
}
echo "deb: built in $(($(date +%s) - t0)) s"

mkdir -p "$out"
rm -f "$out"/*.deb
cp "$work"/*.deb "$out"/
debs=("$out"/*.deb)

# lintian: errors fail; warnings and the rest are shown.
if ! lintian --fail-on error --tag-display-limit 0 "${debs[@]}" > "$work/lintian.log" 2>&1; then
    cat "$work/lintian.log"
    echo "deb: lintian found errors"
    exit 1
fi
if [[ -s $work/lintian.log ]]; then
    echo "deb: lintian (no errors):"
    sed 's/^/  /' "$work/lintian.log"
fi

for deb in "${debs[@]}"; do
    printf 'deb: %s: %s KiB installed, %s files\n' "$(basename "$deb")" \
        "$(dpkg-deb -f "$deb" Installed-Size)" "$(dpkg-deb -c "$deb" | grep -vc '^d')"
done

if [[ $(id -u) != 0 ]]; then
    echo "deb: install test skipped: not root"
    exit 0
fi
packages=(flint flint-dracut flint-agent flint-installer)
for p in "${packages[@]}"; do
    if dpkg-query -W -f '${Status}' "$p" 2> /dev/null | grep -q 'installed'; then
        echo "deb: install test skipped: $p is installed on this machine already"
        exit 0
    fi
done

# What the packages hold, as paths (directories too: the ones only flint
# uses must go with the purge).
for deb in "${debs[@]}"; do
    dpkg-deb -c "$deb" | awk '{ p = $6; sub(/^\./, "", p); sub(/\/$/, "", p); if (p != "") print p }'
done | sort -u > "$work/paths"

purge() {
    dpkg --purge "${packages[@]}" > "$work/purge.log" 2>&1 || {
        cat "$work/purge.log"
        return 1
    }
}
trap 'purge || true; rm -rf "$work"' EXIT

dpkg -i "${debs[@]}" > "$work/install.log" 2>&1 || {
    cat "$work/install.log"
    echo "deb: dpkg -i failed"
    exit 1
}
fail=0
while read -r p; do
    if [[ ! -e $p && ! -L $p ]]; then
        echo "deb: installed, but $p is missing"
        fail=1
    fi
done < "$work/paths"
/usr/bin/flint version > /dev/null || { echo "deb: the installed flint does not run"; fail=1; }
for link in /usr/bin/ignition-validate /usr/libexec/ignition-apply; do
    [[ $(readlink -f "$link") == /usr/bin/flint ]] || { echo "deb: $link does not lead to /usr/bin/flint"; fail=1; }
done

purge
trap 'rm -rf "$work"' EXIT
for p in "${packages[@]}"; do
    if dpkg-query -W -f '${Status}' "$p" 2> /dev/null | grep -q 'installed\|config-files'; then
        echo "deb: $p is still known to dpkg after the purge"
        fail=1
    fi
done
# Left behind: any path of the packages that still exists, unless it is
# a directory something else owns (/usr/bin, /etc/ssh, ...).
while read -r p; do
    if [[ -L $p || -f $p ]]; then
        echo "deb: purged, but $p is left"
        fail=1
    elif [[ -d $p ]] && ! dpkg -S "$p" > /dev/null 2>&1 && [[ -z $(ls -A "$p") ]]; then
        case $p in
        # Directories of the file system's skeleton stay, empty or not.
        /usr/lib/bootupd | /usr/lib/bootupd/* | /usr/lib/dracut/modules.d/30flint | /usr/share/flint)
            echo "deb: purged, but the directory $p is left"
            fail=1
            ;;
        esac
    fi
done < "$work/paths"
if [[ $fail != 0 ]]; then
    exit 1
fi
echo "deb: installed and purged ${packages[*]}: nothing left behind"
