//go:build !unix

package resource

import "syscall"

// reuseAddr does nothing where SO_REUSEADDR is not a unix socket option.
func reuseAddr(network, address string, c syscall.RawConn) error { return nil }
