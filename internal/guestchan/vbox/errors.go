package vbox

import "errors"

// ErrUnsupported means this build cannot speak to vboxguest: the ioctls
// are Linux's, and the messages use the 64-bit parameter layout.
var ErrUnsupported = errors.New("VirtualBox guest properties need linux on a 64-bit architecture")
