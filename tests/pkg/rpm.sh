#!/bin/bash
# tests/pkg/rpm.sh: builds flint's RPMs from dist/flint.spec with
# rpmbuild -bb (offline, from a primed module cache; rpm's check for
# installed but unpackaged files on), and checks that each RPM holds the
# same files as the Debian package of the same name in bin/deb (run
# tests/pkg/deb.sh first; `make pkg` does), apart from what each format
# adds by itself (/usr/share/doc, lintian's overrides) and the man pages'
# compression. The RPMs are left in bin/rpm (OUT=DIR for another place).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$repo/bin/rpm}
debdir=${DEBDIR:-$repo/bin/deb}
export PATH="/usr/local/go/bin:$PATH"

missing=""
for tool in rpmbuild rpm go git dpkg-deb; do
    command -v "$tool" > /dev/null || missing+=" $tool"
done
if [[ -n $missing ]]; then
    echo "rpm: skipped: missing$missing (Debian: rpm, dpkg)"
    exit 0
fi

version=$(sed -n 's/^Version: *//p' "$repo/dist/flint.spec")
debversion=$(sed -n '1s/^flint (\([^)]*\)).*/\1/p' "$repo/debian/changelog")
if [[ $version != "$debversion" ]]; then
    echo "rpm: dist/flint.spec has version $version, debian/changelog $debversion: keep them equal"
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{SOURCES,BUILD,RPMS,SRPMS,SPECS,tmp} "$work/flint-$version"
(
    cd "$repo"
    git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do
            if [[ -e $f || -L $f ]]; then printf '%s\0' "$f"; fi
        done |
        tar --null -T - -cf -
) | tar -xf - -C "$work/flint-$version"
tar -C "$work" -czf "$work/SOURCES/flint-$version.tar.gz" "flint-$version"

(cd "$repo" && go mod download)
gomodcache=$(go env GOMODCACHE)
gocache=$(go env GOCACHE)

t0=$(date +%s)
# --nodeps: Go 1.26 is /usr/local/go here, not an RPM. --without check:
# make test runs the unit tier already.
GOMODCACHE=$gomodcache GOCACHE=$gocache rpmbuild -bb --nodeps --without check \
    --define "_topdir $work" --define "_tmppath $work/tmp" \
    "$repo/dist/flint.spec" > "$work/build.log" 2>&1 || {
    tail -40 "$work/build.log"
    echo "rpm: rpmbuild failed (log above)"
    exit 1
}
echo "rpm: built in $(($(date +%s) - t0)) s"
mkdir -p "$out"
rm -f "$out"/*.rpm
find "$work/RPMS" -name '*.rpm' -exec cp {} "$out"/ \;

# normalize reads a package's files and links (not directories), as
# installed, and leaves out what the format adds itself; man pages are
# uncompressed, and zsh's completions in one place: Debian's zsh reads
# vendor-completions, Fedora's site-functions.
normalize() {
    grep -v -e '^/usr/share/doc/' -e '^/usr/share/lintian/' |
        sed -E -e 's#^(/usr/share/man/.*)\.gz$#\1#' \
            -e 's#^/usr/share/zsh/(vendor-completions|site-functions)/#/usr/share/zsh/(completions)/#' | sort
}
fail=0
for name in flint flint-dracut flint-agent flint-installer; do
    rpmfile=$(find "$out" -name "$name-$version-*.rpm" | head -1)
    debfile=$(find "$debdir" -name "${name}_${version}_*.deb" 2> /dev/null | head -1)
    if [[ -z $rpmfile ]]; then
        echo "rpm: no $name RPM was built"
        fail=1
        continue
    fi
    printf 'rpm: %s: %s KiB installed, %s files\n' "$(basename "$rpmfile")" \
        "$(($(rpm -qp --qf '%{SIZE}' "$rpmfile" 2> /dev/null) / 1024))" "$(rpm -qlp "$rpmfile" 2> /dev/null | wc -l)"
    if [[ -z $debfile ]]; then
        echo "rpm: no $name Debian package in $debdir to compare with (run tests/pkg/deb.sh first)"
        fail=1
        continue
    fi
    # Directories are left out of both lists: rpm names only those the
    # package owns, dpkg every one on the way.
    rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$rpmfile" 2> /dev/null |
        awk '$1 !~ /^d/ { print $2 }' | normalize > "$work/$name.rpm.list"
    dpkg-deb -c "$debfile" | awk '$1 !~ /^d/ { p = $6; sub(/^\./, "", p); print p }' | normalize > "$work/$name.deb.list"
    if ! diff -u "$work/$name.deb.list" "$work/$name.rpm.list" > "$work/$name.diff"; then
        echo "rpm: $name: the RPM's files (+) differ from the Debian package's (-):"
        sed -n '3,$p' "$work/$name.diff"
        fail=1
    fi
done
if [[ $fail != 0 ]]; then
    exit 1
fi
echo "rpm: every RPM holds the files of its Debian package"
