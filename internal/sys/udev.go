package sys

import "errors"

// UdevEvent is an event udevd has processed, as it broadcasts it to its
// listeners (libudev's monitor, group 2 of the kernel's uevent netlink
// family), reduced to what flint matches on.
type UdevEvent struct {
	// Action is "add", "remove", "change", ...
	Action string
	// Devname is the device's node, /dev/vdb1.
	Devname string
	// Seqnum is the kernel's sequence number of the uevent udevd
	// processed (SEQNUM).
	Seqnum uint64
	// SynthUUID is the UUID of a synthetic uevent written with one
	// (TriggerUevent), "" for the others.
	SynthUUID string
}

// ErrUdevOverflow is a monitor that missed events: its socket's buffer
// overflowed (ENOBUFS).
var ErrUdevOverflow = errors.New("udev's events overflowed the monitor's buffer")
