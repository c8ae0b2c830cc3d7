#!/bin/sh
# dist/install.sh install|uninstall|plan: what `make install` writes and
# `make uninstall` removes, from one list, so the two cannot disagree.
# The Makefile passes every directory (GNU's names: DESTDIR, BINDIR,
# LIBEXECDIR, MANDIR, ...) in the environment; see its "install" section.
#
# The plan is one line per object, in the order they are made:
#   d DIR              a directory flint owns (removed when empty)
#   f MODE SRC DEST    a file, copied with that mode
#   l TARGET DEST      a symbolic link
# "plan" prints it; paths are without DESTDIR.
#
# Every file under dracut/ has a place here or the plan fails: a new unit,
# script or drop-in must be given one, not silently left out.
set -eu

: "${BIN:?}" "${BINDIR:?}" "${LIBEXECDIR:?}" "${DATADIR:?}" "${MANDIR:?}"
: "${SYSTEMDUNITDIR:?}" "${SYSTEMDGENERATORDIR:?}" "${SYSTEMDPRESETDIR:?}"
: "${DRACUTMODDIR:?}" "${SSHDCONFDIR:?}" "${GRUBCONFDIR:?}"
: "${BASHCOMPDIR:?}" "${ZSHCOMPDIR:?}" "${FISHCOMPDIR:?}"
DESTDIR=${DESTDIR-}
GENDIR=${GENDIR-}
COMPAT_NAMES=${COMPAT_NAMES-yes}
COMPAT_IGNITION=${COMPAT_IGNITION-$COMPAT_NAMES}
COMPAT_AFTERBURN=${COMPAT_AFTERBURN-$COMPAT_NAMES}
COMPAT_COREOS_INSTALLER=${COMPAT_COREOS_INSTALLER-$COMPAT_NAMES}
COMPAT_BUTANE=${COMPAT_BUTANE-$COMPAT_NAMES}

die() {
	echo "dist/install.sh: $*" >&2
	exit 1
}

# mode prints the mode a source file is installed with: 0755 for what git
# keeps executable (scripts, generators), 0644 for the rest.
mode() {
	if [ -x "$1" ]; then echo 0755; else echo 0644; fi
}

# rel prints the relative path from directory $1 to $2, as a symlink in $1
# names it (neither needs to exist; no symlink on the way is followed).
rel() {
	realpath -ms --relative-to="$1" "$2"
}

# copy plans SRC into directory DIR under its own name: a symlink stays a
# symlink (the upstream unit names are aliases of flint's), anything else
# is a file.
copy() {
	if [ -L "$1" ]; then
		echo "l $(readlink "$1") $2/$(basename "$1")"
	else
		echo "f $(mode "$1") $1 $2/$(basename "$1")"
	fi
}

# compat plans the upstream names of one tool as symlinks to flint, when
# $1 is yes: in BINDIR beside flint, or in LIBEXECDIR for the names
# Ignition's Makefile puts there (ignition-apply, ignition-rmcfg).
compat() {
	switch=$1
	shift
	case $switch in
	yes) ;;
	no) return ;;
	*) die "COMPAT_* must be yes or no, not '$switch'" ;;
	esac
	for name; do
		case $name in
		ignition-apply | ignition-rmcfg) echo "l $(rel "$LIBEXECDIR" "$BINDIR/flint") $LIBEXECDIR/$name" ;;
		*) echo "l flint $BINDIR/$name" ;;
		esac
	done
}

# compat_enabled says whether the upstream name $1 is installed.
compat_enabled() {
	case $1 in
	ignition*) [ "$COMPAT_IGNITION" = yes ] ;;
	afterburn) [ "$COMPAT_AFTERBURN" = yes ] ;;
	coreos-installer | rdcore) [ "$COMPAT_COREOS_INSTALLER" = yes ] ;;
	butane) [ "$COMPAT_BUTANE" = yes ] ;;
	*) return 1 ;;
	esac
}

plan() {
	echo "f 0755 $BIN $BINDIR/flint"
	compat "$COMPAT_IGNITION" ignition ignition-validate ignition-apply ignition-rmcfg
	compat "$COMPAT_AFTERBURN" afterburn
	compat "$COMPAT_COREOS_INSTALLER" coreos-installer rdcore
	compat "$COMPAT_BUTANE" butane

	# The dracut modules, each directory as it is (module-setup.sh finds
	# flint on the PATH, BINDIR).
	for mod in dracut/[0-9][0-9]*/; do
		mod=${mod%/}
		echo "d $DRACUTMODDIR/${mod#dracut/}"
		for src in "$mod"/*; do
			case ${src##*/} in
			README.md) ;;
			*) copy "$src" "$DRACUTMODDIR/${mod#dracut/}" ;;
			esac
		done
	done

	# The real root's units (dracut/systemd/README.md says where each goes).
	for src in dracut/systemd/*; do
		# An upstream unit name (a link to flint's unit) goes with its
		# tool's names: a distro keeping Afterburn keeps its units too.
		if [ -L "$src" ]; then
			case ${src##*/} in
			afterburn*) compat_enabled afterburn || continue ;;
			coreos-installer*) compat_enabled coreos-installer || continue ;;
			ignition*) compat_enabled ignition || continue ;;
			esac
		fi
		case ${src##*/} in
		README.md) ;;
		*.service | *.target | *.socket | *.timer | *.path) copy "$src" "$SYSTEMDUNITDIR" ;;
		*-generator) copy "$src" "$SYSTEMDGENERATORDIR" ;;
		*.preset) copy "$src" "$SYSTEMDPRESETDIR" ;;
		*-authorized-keys.conf) copy "$src" "$SSHDCONFDIR" ;;
		*) die "no place to install $src: give it one in dist/install.sh" ;;
		esac
	done

	for src in dracut/grub2/*.cfg; do
		copy "$src" "$GRUBCONFDIR"
	done

	echo "d $DATADIR/flint"
	echo "f 0644 examples/installer-config.yaml $DATADIR/flint/example-installer-config.yaml"

	# What make gen wrote from the flag tables: man pages and completions,
	# those of an upstream name only when that name is installed.
	if [ -n "$GENDIR" ]; then
		for src in "$GENDIR"/man/*.[1-8]; do
			[ -e "$src" ] || continue
			name=${src##*/}
			case ${name%.*} in
			flint | flint-*) ;;
			*) compat_enabled "${name%.*}" || continue ;;
			esac
			echo "f 0644 $src $MANDIR/man${src##*.}/$name"
		done
		for shell in bash zsh fish; do
			case $shell in
			bash) dir=$BASHCOMPDIR ;;
			zsh) dir=$ZSHCOMPDIR ;;
			fish) dir=$FISHCOMPDIR ;;
			esac
			for src in "$GENDIR/completion/$shell"/*; do
				[ -e "$src" ] || continue
				name=${src##*/}
				name=${name#_}
				name=${name%.fish}
				if [ "$name" = flint ] || compat_enabled "$name"; then
					echo "f 0644 $src $dir/${src##*/}"
				fi
			done
		done
	fi
}

do_install() {
	plan | while read -r kind a b c; do
		case $kind in
		d) install -d -m 0755 "$DESTDIR$a" ;;
		f)
			install -d -m 0755 "$DESTDIR${c%/*}"
			install -m "$a" "$b" "$DESTDIR$c"
			;;
		l)
			install -d -m 0755 "$DESTDIR${b%/*}"
			ln -sfn "$a" "$DESTDIR$b"
			;;
		esac
	done
}

# do_uninstall removes every file and link of the plan, then the
# directories flint owns once they are empty (deepest first); the shared
# ones (BINDIR, SYSTEMDUNITDIR, ...) stay.
do_uninstall() {
	plan | while read -r kind a b c; do
		case $kind in
		f) rm -f "$DESTDIR$c" ;;
		l) rm -f "$DESTDIR$b" ;;
		esac
	done
	plan | awk '$1 == "d" { print $2 }' | sort -r | while read -r dir; do
		if [ -d "$DESTDIR$dir" ]; then
			rmdir "$DESTDIR$dir" 2>/dev/null || echo "dist/install.sh: $DESTDIR$dir is not empty, kept" >&2
		fi
	done
}

case ${1-} in
install)
	plan > /dev/null # fail before writing anything
	do_install
	;;
uninstall) do_uninstall ;;
plan) plan ;;
*) die "usage: dist/install.sh install|uninstall|plan" ;;
esac
