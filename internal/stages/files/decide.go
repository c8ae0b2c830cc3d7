package files

import (
	"io/fs"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/rootfs"
)

// Decision is what the files stage does with one node of the config,
// given what is at its path: the spec's overwrite rule (overwrite in
// coreos/ignition docs/configuration-v3_6.md; internal/exec/util/file.go
// and filesystemEntries.go) in one place, for the stage and for flint
// plan, which reports it without writing.
type Decision int

const (
	// DecideCreate: nothing is at the path; the node is made.
	DecideCreate Decision = iota
	// DecideReplace: overwrite is true and something is there: it is
	// removed (or, a regular file, renamed over) and the node made anew.
	DecideReplace
	// DecideKeep: what is there stays, with the mode and owner the config
	// gives: a directory, or a regular file the entry gives no contents
	// and no fragments.
	DecideKeep
	// DecideAppend: a regular file that stays gets the entry's fragments
	// (on a copy, renamed over it).
	DecideAppend
	// DecideMatch: what is there may not be overwritten and must already
	// be what the entry makes, else the entry is refused: a regular file
	// with the entry's contents, mode and owner (what a boot that lost
	// its progress to a power failure wrote), a symlink with the entry's
	// target, a hard link to the entry's target.
	DecideMatch
	// DecideRefuse: what is there is not the entry's kind of node and
	// overwrite is false (ErrExists).
	DecideRefuse
)

// DecideFile is the rule for a file entry; existing is what is at its
// path (nil: nothing).
func DecideFile(f config.File, existing *rootfs.Info) Decision {
	switch {
	case existing == nil:
		return DecideCreate
	case isTrue(f.Overwrite):
		return DecideReplace
	case !existing.Mode.IsRegular():
		return DecideRefuse
	case f.Contents.Source != nil:
		return DecideMatch
	case len(f.Append) > 0:
		return DecideAppend
	}
	return DecideKeep
}

// DecideDirectory is the rule for a directory entry.
func DecideDirectory(d config.Directory, existing *rootfs.Info) Decision {
	switch {
	case existing == nil:
		return DecideCreate
	case isTrue(d.Overwrite):
		return DecideReplace
	case !existing.IsDir():
		return DecideRefuse
	}
	return DecideKeep
}

// DecideLink is the rule for a symbolic or hard link entry: an existing
// node must be the same link (a hard link is compared by inode with its
// target, whatever the node is).
func DecideLink(l config.Link, existing *rootfs.Info) Decision {
	switch {
	case existing == nil:
		return DecideCreate
	case isTrue(l.Overwrite):
		return DecideReplace
	case isTrue(l.Hard), existing.Mode&fs.ModeSymlink != 0:
		return DecideMatch
	}
	return DecideRefuse
}

func isTrue(b *bool) bool { return b != nil && *b }
