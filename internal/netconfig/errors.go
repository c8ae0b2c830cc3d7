package netconfig

import "errors"

// ErrInvalid means a network description flint cannot read: a value of
// the wrong kind, an address or netmask that is not one, an unknown
// version.
var ErrInvalid = errors.New("network configuration flint does not read")
