package kargs

import "errors"

// ErrNoBootFilesystem means no filesystem labelled "boot" was found (and
// none was named): there is nowhere to put the arguments.
var ErrNoBootFilesystem = errors.New("no boot filesystem")

// ErrAmbiguousBootFilesystem means several filesystems carry the label
// "boot": editing the wrong one would be silent, so the stage refuses.
var ErrAmbiguousBootFilesystem = errors.New("more than one filesystem is labelled boot")

// ErrNoEntries means the boot filesystem holds no Boot Loader
// Specification entries (loader/entries/*.conf): flint's built-in editor
// cannot apply the arguments, and a distro helper is needed.
var ErrNoEntries = errors.New("no boot loader entries")

// ErrConflict means the config's shouldExist and shouldNotExist undo each
// other (a shouldNotExist entry removes part of a shouldExist group):
// every boot would change the entries and reboot again.
var ErrConflict = errors.New("shouldExist and shouldNotExist undo each other")

// ErrNoReboot means the stage asked for a reboot after changing the
// entries and the machine did not go down: provisioning must not go on
// with the old kernel arguments.
var ErrNoReboot = errors.New("the machine did not reboot")
