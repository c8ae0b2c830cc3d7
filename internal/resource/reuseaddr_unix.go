//go:build unix

package resource

import "syscall"

// reuseAddr lets a connection bind the local port of an earlier one still
// in TIME_WAIT, so a Request's LocalPort can be used again at once.
func reuseAddr(network, address string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
